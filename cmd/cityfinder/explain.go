package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// explain adds the CLI's advice to an error on its way to the user: the
// domain's errors say what went wrong, not which command fixes it. A nil
// error stays nil.
func explain(err error) error {
	if err == nil {
		return nil
	}
	if msg, ok := unknownCommand(err); ok {
		return errors.New(msg)
	}
	// A request's own error, about the text searched for (runQuery checks
	// the flags): the domain's sentences start with a capital, the CLI's
	// messages follow "cityfinder: ".
	if invalid, ok := err.(*search.InvalidError); ok {
		r, size := utf8.DecodeRuneInString(invalid.Message)
		return errors.New(string(unicode.ToLower(r)) + invalid.Message[size:])
	}
	var de *search.DatasetError
	if !errors.As(err, &de) {
		return err
	}
	switch {
	case errors.Is(err, search.ErrEmptyDataset):
		return fmt.Errorf("dataset %s is empty: run `cityfinder import --dataset %s`", de.Dataset, de.Dataset)
	case errors.Is(err, search.ErrCorrupt):
		cause := strings.TrimPrefix(de.Err.Error(), search.ErrCorrupt.Error()+": ")
		return fmt.Errorf("dataset %s is corrupt: %s; import it again to replace the file: `cityfinder import --dataset %s`",
			de.Dataset, cause, de.Dataset)
	case errors.Is(err, search.ErrUnavailable):
		return fmt.Errorf("%w (to start over, run `cityfinder import --dataset %s`)", err, de.Dataset)
	}
	return err
}

// errNoQueryText is query's usage error without an argument.
var errNoQueryText = errors.New(`missing the text to search for: type cityfinder query TEXT, for example cityfinder query istanbul`)

// noDataDirError is a query of the embedded store in a directory that does
// not exist: run from another directory than the import, most likely.
type noDataDirError struct {
	dir     string
	dataset search.Dataset
}

func (e *noDataDirError) Error() string {
	dir := e.dir
	if abs, err := filepath.Abs(dir); err == nil && abs != filepath.Clean(dir) {
		dir += " (" + abs + ")"
	}
	return fmt.Sprintf("data directory %s does not exist: pass --data-dir with the directory you imported into, "+
		"or import first: `cityfinder import --dataset %s`", dir, e.dataset)
}

// badValueError is an option's value that does not parse: a flag of a
// command that is no setting (a settingError says the same of settings).
type badValueError struct {
	flag  string
	value string
	form  string // what it accepts: "a whole number"
}

func (e *badValueError) Error() string {
	return fmt.Sprintf("invalid --%s %q: use %s", e.flag, e.value, e.form)
}

// acceptedForm says what f accepts: a setting's form, or by the type of an
// option's value (pflag's Value.Type names).
func acceptedForm(f *pflag.Flag) string {
	if v, ok := settingFlag(f); ok {
		return v.s.acceptedForm()
	}
	if f.Name == "limit" {
		return fmt.Sprintf("a whole number from 1 to %d", search.MaxLimit)
	}
	switch f.Value.Type() {
	case "int":
		return "a whole number"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	}
	return "another value"
}

// explainFlag is the command tree's FlagErrorFunc: it says in the CLI's
// words which flag is wrong and what it takes, instead of pflag's parser
// errors ("strconv.ParseInt: parsing …").
func explainFlag(cmd *cobra.Command, err error) error {
	var invalid *pflag.InvalidValueError
	var missing *pflag.ValueRequiredError
	var unknown *pflag.NotExistError
	switch {
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		if v, ok := settingFlag(f); ok {
			return badText(v.s, "--"+f.Name, invalid.GetValue())
		}
		return &badValueError{flag: f.Name, value: invalid.GetValue(), form: acceptedForm(f)}
	case errors.As(err, &missing):
		f := missing.GetFlag()
		return fmt.Errorf("--%s needs a value: use %s", f.Name, acceptedForm(f))
	case errors.As(err, &unknown):
		name := unknown.GetSpecifiedName()
		dashes := "--"
		if unknown.GetSpecifiedShortnames() != "" {
			dashes = "-"
		}
		msg := fmt.Sprintf("unknown flag %s%s for %s", dashes, name, cmd.CommandPath())
		if others := commandsWithFlag(cmd.Root(), name); len(others) > 0 && dashes == "--" {
			msg += fmt.Sprintf(" (it is a flag of %s)", andList(others))
		}
		return fmt.Errorf("%s: see `%s --help`", msg, cmd.CommandPath())
	}
	return err
}

// commandsWithFlag names the commands that have a flag called name.
func commandsWithFlag(root *cobra.Command, name string) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.Flags().Lookup(name) != nil {
			names = append(names, c.Name())
		}
	}
	slices.Sort(names)
	return names
}

// andList joins "a", "b", "c" as "a, b and c".
func andList(items []string) string { return joinList(items, " and ") }

// orList joins "a", "b", "c" as "a, b or c".
func orList(items []string) string { return joinList(items, " or ") }

func joinList(items []string, last string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}

// unknownCommand puts cobra's error for a misspelt command, which lists its
// suggestions on lines of their own, on one line.
func unknownCommand(err error) (string, bool) {
	msg := err.Error()
	if !strings.HasPrefix(msg, "unknown command ") {
		return "", false
	}
	msg, suggestions, _ := strings.Cut(msg, "\n\nDid you mean this?\n")
	if names := strings.Fields(suggestions); len(names) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", orList(names))
	}
	return msg + ": see `cityfinder --help`", true
}

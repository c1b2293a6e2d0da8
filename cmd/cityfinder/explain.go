package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

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
	// Only a request's own error: one that a command wrapped already names
	// its flag.
	if invalid, ok := err.(*search.InvalidError); ok {
		// "Invalid limit 0: use …" reads "invalid --limit 0: use …".
		msg := invalid.Message
		if flag := invalidFlags[invalid.Field]; flag != "" {
			msg = strings.Replace(msg, "Invalid "+invalid.Field, "invalid "+flag, 1)
		}
		return errors.New(strings.ToLower(msg[:1]) + msg[1:])
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

// invalidFlags names the flag of each part of a search.Request; the query
// text is the argument.
var invalidFlags = map[string]string{
	"dataset":    "--dataset",
	"limit":      "--limit",
	"country":    "--country",
	"near":       "--near",
	"bias_scale": "--bias-scale",
	"bbox":       "--bbox",
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

// badValueError is a setting's value that does not parse, from a flag, an
// environment variable or the config file.
type badValueError struct {
	where string // as the user wrote it: "--limit", "CITYFINDER_MAX", "limiter.max (in cityfinder.yaml)"
	value string
	form  string // what it accepts: "a whole number"
}

func (e *badValueError) Error() string {
	return fmt.Sprintf("invalid %s %q: use %s", e.where, e.value, e.form)
}

// acceptedForm says what flag accepts, by the type of its value (pflag's
// Value.Type names) or, where the range matters, by the flag itself.
func acceptedForm(flag, typ string) string {
	if f := flagForms[flag]; f != "" {
		return f
	}
	switch typ {
	case "int", "int64":
		return "a whole number"
	case "duration":
		return "a duration such as 3s, 500ms or 1m30s"
	case "bool":
		return "true or false"
	case "stringSlice":
		return "a comma-separated list"
	}
	return "another value"
}

// flagForms are the accepted forms of the numbers with a range.
var flagForms = map[string]string{
	"limit":            fmt.Sprintf("a whole number from 1 to %d", search.MaxLimit),
	"max":              "a whole number, at least 1",
	"ipv6-prefix":      "a whole number from 1 to 128",
	"max-clients":      "a whole number (0: no cap)",
	"max-header-bytes": "a whole number of bytes, at least 1024",
	"mongo-pool-size":  "a whole number, at least 1",
	"mongo-batch-size": "a whole number, at least 1",
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
		return &badValueError{where: "--" + f.Name, value: invalid.GetValue(), form: acceptedForm(f.Name, f.Value.Type())}
	case errors.As(err, &missing):
		f := missing.GetFlag()
		return fmt.Errorf("--%s needs a value: use %s", f.Name, acceptedForm(f.Name, f.Value.Type()))
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

package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// explain adds the CLI's advice to an error on its way to the user: the
// domain's errors say what went wrong, not which command fixes it. A nil
// error stays nil.
func explain(err error) error {
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

// Command cityfinder imports city datasets, answers prefix queries from the
// command line and serves the rate-limited /search HTTP API.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process's exit code. Errors
// are printed here and nowhere else.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := execute(ctx, args, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "cityfinder: %v\n", err)
		return 1
	}
	return 0
}

// execute runs one command line and returns its error in the words the
// user reads (see explain).
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRootCmd()
	root.SetArgs(negativePointLast(args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	return explain(root.ExecuteContext(ctx))
}

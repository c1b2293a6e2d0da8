// Command ferretdb runs FerretDB v1, a MongoDB-wire-protocol server backed by
// SQLite, for cityfinder's MongoDB tests. It lives in a Go module of its own so
// that FerretDB's dependencies stay out of cityfinder's module.
//
// It listens on -addr (a free loopback port by default), keeps its data in
// -dir (created if missing), prints its MongoDB URI as one line on stdout
// once it accepts connections, and runs until SIGINT or SIGTERM, or until
// its standard input reaches EOF: a test that starts it holds the other end
// of a pipe, so the server dies with the test even if the test is killed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "TCP address to listen on")
	dir := flag.String("dir", "", "directory of the SQLite databases (required)")
	level := flag.String("log-level", "warn", "FerretDB's log level: debug, info, warn or error")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	// FerretDB opens the directory but does not create it.
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // returns at EOF: the parent is gone
		stop()
	}()

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *addr},
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})),
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dir + "/",
	})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	// MongoDBURI waits until the listener is bound, which Run does.
	fmt.Println(f.MongoDBURI())
	return <-done
}

package main

import (
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// app is what the commands share once the root has read the configuration.
type app struct {
	cfg    *config
	logger *slog.Logger
}

func newRootCmd() *cobra.Command {
	a := &app{}
	root := &cobra.Command{
		Use:   "cityfinder",
		Short: "Find cities by the first letters of their names",
		Long: `cityfinder imports city datasets into a store, answers prefix queries from
the command line and serves them over a rate-limited HTTP API.

Settings come from flags, then CITYFINDER_* environment variables, then the
--config YAML file, then defaults.`,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			// version, help and completion read no configuration, so
			// that they work even where it is broken.
			if cmd.Flags().Lookup(settingConfig.flag) == nil {
				return nil
			}
			cfg, err := loadConfig(cmd.Flags())
			if err != nil {
				return err
			}
			a.cfg = cfg
			a.logger = newLogger(cmd.ErrOrStderr(), cfg.Log.Level)
			return nil
		},
	}
	root.SetVersionTemplate(versionLine())
	root.SetFlagErrorFunc(explainFlag)
	// Only these commands take settings: version, help and completion list
	// none of them.
	root.AddCommand(newImportCmd(a), newQueryCmd(a), newServeCmd(a))
	root.AddCommand(newShowCmd(a), newNearestCmd(a), newHealthcheckCmd(a))
	root.AddCommand(newVersionCmd())
	registerCompletions(root)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version (as --version does)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

// versionLine is what version and --version print.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return fmt.Sprintf("cityfinder %s\n", buildVersion(version, bi))
}

// buildVersion is the version set with -ldflags (make build), else the
// module's version that `go install …@v1.2.3` records, else "dev".
func buildVersion(ldflags string, bi *debug.BuildInfo) string {
	if ldflags != "dev" || bi == nil {
		return ldflags
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return ldflags
}

// parseLevel reads a --log-level value.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// newLogger logs text to a terminal and JSON elsewhere.
func newLogger(w io.Writer, level string) *slog.Logger {
	l, _ := parseLevel(level) // validated with the config
	opts := &slog.HandlerOptions{Level: l}
	if isTerminal(w) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

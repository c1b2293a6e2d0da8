package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// registerCompletions tells the shells (see `cityfinder completion`) what
// values each flag takes, on every command that has it. The other flags
// complete to nothing rather than to file names.
func registerCompletions(root *cobra.Command) {
	datasets := make([]cobra.Completion, len(search.Datasets))
	for i, d := range search.Datasets {
		datasets[i] = string(d)
	}
	values := map[string]cobra.CompletionFunc{
		settingDataset.flag:       cobra.FixedCompletions(datasets, cobra.ShellCompDirectiveNoFileComp),
		settingReadyDatasets.flag: cobra.FixedCompletions(datasets, cobra.ShellCompDirectiveNoFileComp),
		settingLogLevel.flag: cobra.FixedCompletions([]cobra.Completion{"debug", "info", "warn", "error"},
			cobra.ShellCompDirectiveNoFileComp),
		// The files import reads: okfn CSV, MaxMind text, GeoNames text or zip, gzipped or not.
		"file":                  cobra.FixedCompletions([]cobra.Completion{"csv", "txt", "gz", "zip"}, cobra.ShellCompDirectiveFilterFileExt),
		settingGeoNames.flag:    cobra.FixedCompletions([]cobra.Completion{"txt", "gz", "zip"}, cobra.ShellCompDirectiveFilterFileExt),
		settingRegionNames.flag: cobra.FixedCompletions([]cobra.Completion{"csv"}, cobra.ShellCompDirectiveFilterFileExt),
		settingConfig.flag:      cobra.FixedCompletions([]cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt),
		settingDataDir.flag:     cobra.FixedCompletions(nil, cobra.ShellCompDirectiveFilterDirs),
	}
	for _, cmd := range root.Commands() {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			complete := values[f.Name]
			if complete == nil {
				if f.Value.Type() == "bool" {
					return // takes no value
				}
				complete = cobra.NoFileCompletions
			}
			// Registering fails only for a flag registered twice.
			_ = cmd.RegisterFlagCompletionFunc(f.Name, complete)
		})
	}
}

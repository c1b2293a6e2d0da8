//go:build race

package main

// raceEnabled says that this test binary runs under the race detector,
// where an import takes five to ten times as long.
const raceEnabled = true

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const systemdUnit = "../../deploy/systemd/cityfinder.service"

// TestSystemdUnit checks deploy/systemd/cityfinder.service: its ExecStart
// is a command line cityfinder accepts, serving the state directory that
// the sandbox leaves writable; its stop timeout covers the drain; and,
// where systemd is installed, systemd-analyze verifies it without a word
// and rates its exposure at most 2.0 ("OK").
func TestSystemdUnit(t *testing.T) {
	unit := mustReadUnit(t, systemdUnit)
	want := map[string]string{
		"DynamicUser":     "yes",
		"StateDirectory":  "cityfinder",
		"ProtectSystem":   "strict",
		"ProtectHome":     "yes",
		"PrivateTmp":      "yes",
		"NoNewPrivileges": "yes",
		"KillSignal":      "SIGTERM",
	}
	for key, value := range want {
		if got := unit[key]; !slices.Equal(got, []string{value}) {
			t.Errorf("%s=%q, want %s=%s", key, got, key, value)
		}
	}

	if len(unit["ExecStart"]) != 1 {
		t.Fatalf("ExecStart=%q, want one", unit["ExecStart"])
	}
	args := strings.Fields(unit["ExecStart"][0])
	if filepath.Base(args[0]) != "cityfinder" {
		t.Fatalf("ExecStart runs %s", args[0])
	}
	for _, s := range settings {
		t.Setenv(s.env, "") // only the unit's own settings
	}
	cmd := mustParseCommand(t, append([]string{"cityfinder"}, args[1:]...))
	if cmd.Name() != "serve" {
		t.Fatalf("ExecStart runs cityfinder %s, want serve", cmd.Name())
	}
	cfg, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatalf("ExecStart: %v", err)
	}
	if state := "/var/lib/" + unit["StateDirectory"][0]; cfg.DataDir != state {
		t.Errorf("serve reads %s, want the state directory %s, the one it may write", cfg.DataDir, state)
	}
	stop, err := time.ParseDuration(unit["TimeoutStopSec"][0] + "s")
	if err != nil {
		t.Fatalf("TimeoutStopSec=%q: %v", unit["TimeoutStopSec"], err)
	}
	if need := cfg.Server.DrainDelay + cfg.Server.ShutdownTimeout + 5*time.Second; stop < need {
		t.Errorf("TimeoutStopSec=%s, want at least %s: the drain, the shutdown and 5 s", stop, need)
	}

	t.Run("systemd-analyze", func(t *testing.T) {
		analyze, err := exec.LookPath("systemd-analyze")
		if err != nil {
			t.Skip("no systemd-analyze: systemd is not installed")
		}
		// verify wants ExecStart's program to exist: any executable does.
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(mustReadFile(t, systemdUnit)), "ExecStart="+args[0], "ExecStart="+self, 1)
		copied := filepath.Join(t.TempDir(), "cityfinder.service")
		if err := os.WriteFile(copied, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		// A misspelt directive is only a warning to verify: any output fails.
		if out, err := exec.Command(analyze, "verify", copied).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
		if out, err := exec.Command(analyze, "security", "--offline=yes", "--threshold=20", copied).CombinedOutput(); err != nil {
			t.Errorf("systemd-analyze security: exposure above 2.0 (%v):\n%s", err, out)
		}
	})
}

// mustReadUnit reads a unit file's directives, each with its values in
// order, sections and comments left out.
func mustReadUnit(t *testing.T, path string) map[string][]string {
	t.Helper()
	unit := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(mustReadFile(t, path)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is no directive", path, line)
		}
		unit[key] = append(unit[key], value)
	}
	return unit
}

package main

import (
	"bytes"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/cityfinder/cityfinder/internal/image"
)

const manifestsDir = "../../deploy/kubernetes"

// serve's resident memory with the datasets the Deployment imports: the
// small dataset enriched with GeoNames, measured as docs/container.md says
// (the plain one is 27 MB). A pod must ask for at least that, and its
// limit must hold two generations, as during a reload.
const smallServeRSS = 37 << 20

// manifests are the objects of deploy/kubernetes, each decoded into its
// k8s.io/api type with unknown fields refused.
type manifests struct {
	configMaps  map[string]*corev1.ConfigMap
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	pdbs        []*policyv1.PodDisruptionBudget
	hpas        []*autoscalingv2.HorizontalPodAutoscaler
}

// mustReadManifests decodes every resource the kustomization names, and
// fails on a YAML file of the directory that it does not name.
func mustReadManifests(t *testing.T) manifests {
	t.Helper()
	var kustomization struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Labels     []struct {
			Pairs map[string]string `json:"pairs"`
		} `json:"labels"`
		Resources []string `json:"resources"`
		Images    []struct {
			Name    string `json:"name"`
			NewName string `json:"newName,omitempty"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}
	mustDecodeStrict(t, mustReadFile(t, filepath.Join(manifestsDir, "kustomization.yaml")), &kustomization)
	if kustomization.Kind != "Kustomization" || len(kustomization.Images) != 1 || kustomization.Images[0].Name != image.Repository {
		t.Errorf("kustomization.yaml: kind %q, images %+v: want a Kustomization that names the image %q", kustomization.Kind, kustomization.Images, image.Repository)
	}
	files, err := filepath.Glob(filepath.Join(manifestsDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(f); name != "kustomization.yaml" && !slices.Contains(kustomization.Resources, name) {
			t.Errorf("kustomization.yaml leaves out %s", name)
		}
	}

	m := manifests{configMaps: map[string]*corev1.ConfigMap{}, deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{}}
	for _, name := range kustomization.Resources {
		for i, doc := range bytes.Split(mustReadFile(t, filepath.Join(manifestsDir, name)), []byte("\n---\n")) {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s, document %d: %v", name, i+1, err)
			}
			where := name + ": " + meta.Kind
			switch meta.APIVersion + " " + meta.Kind {
			case "v1 ConfigMap":
				o := mustDecode[corev1.ConfigMap](t, doc, where)
				m.configMaps[o.Name] = o
			case "apps/v1 Deployment":
				o := mustDecode[appsv1.Deployment](t, doc, where)
				m.deployments[o.Name] = o
			case "v1 Service":
				o := mustDecode[corev1.Service](t, doc, where)
				m.services[o.Name] = o
			case "policy/v1 PodDisruptionBudget":
				o := mustDecode[policyv1.PodDisruptionBudget](t, doc, where)
				m.pdbs = append(m.pdbs, o)
			case "autoscaling/v2 HorizontalPodAutoscaler":
				o := mustDecode[autoscalingv2.HorizontalPodAutoscaler](t, doc, where)
				m.hpas = append(m.hpas, o)
			default:
				t.Errorf("%s, document %d: unexpected %s %s", name, i+1, meta.APIVersion, meta.Kind)
			}
		}
	}
	return m
}

// mustDecode decodes doc into a new T, unknown fields refused.
func mustDecode[T any](t *testing.T, doc []byte, where string) *T {
	t.Helper()
	var v T
	mustDecodeStrict(t, doc, &v, where)
	return &v
}

func mustDecodeStrict(t *testing.T, doc []byte, v any, where ...string) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		t.Fatalf("%s: %v", strings.Join(where, ""), err)
	}
}

// TestKubernetesManifests checks that deploy/kubernetes runs the image as
// it is built (its user, port, volume and command) and that every command
// line in it is one cityfinder accepts: each container's arguments, with
// its environment and the ConfigMap's file, load as the command would
// load them, unknown flags and keys refused.
func TestKubernetesManifests(t *testing.T) {
	m := mustReadManifests(t)
	dep := m.deployments["cityfinder"]
	if dep == nil {
		t.Fatal("no Deployment cityfinder")
	}
	pod := dep.Spec.Template.Spec

	t.Run("runs as the image's non-root user", func(t *testing.T) {
		sc := pod.SecurityContext
		if sc == nil || !deref(sc.RunAsNonRoot) || deref(sc.RunAsUser) != image.UID || deref(sc.RunAsGroup) != image.GID || deref(sc.FSGroup) != image.GID {
			t.Errorf("pod securityContext %+v, want runAsNonRoot, user and group %d, fsGroup %d (so that /data is writable)", sc, image.UID, image.GID)
		}
		for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
			csc := c.SecurityContext
			if csc == nil || !deref(csc.ReadOnlyRootFilesystem) || deref(csc.AllowPrivilegeEscalation) ||
				csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("container %s: securityContext %+v, want a read-only root, no privilege escalation, every capability dropped", c.Name, csc)
			}
			if !slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.MountPath == image.DataDir }) {
				t.Errorf("container %s mounts nothing at %s", c.Name, image.DataDir)
			}
		}
	})

	configs := map[string]*config{}
	for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
		t.Run("container "+c.Name+" loads its configuration", func(t *testing.T) {
			if c.Image != image.Repository {
				t.Fatalf("image %q, want %q (kustomization.yaml names the registry)", c.Image, image.Repository)
			}
			if len(c.Command) != 0 {
				t.Errorf("command %q replaces the image's entrypoint %q", c.Command, image.Entrypoint)
			}
			args := slices.Concat(image.Entrypoint, c.Args)
			configs[c.Name] = mustLoadContainer(t, m, pod, c, args)
		})
	}

	serve, cfg := pod.Containers[0], configs[pod.Containers[0].Name]
	if len(pod.Containers) != 1 || cfg == nil {
		t.Fatalf("%d containers, want serve alone, whose configuration loads", len(pod.Containers))
	}

	t.Run("serve listens on the image's port", func(t *testing.T) {
		_, port, err := net.SplitHostPort(cfg.Server.Addr)
		if err != nil || port != strconv.Itoa(image.Port) {
			t.Errorf("serve listens on %q, want port %d", cfg.Server.Addr, image.Port)
		}
		if cfg.DataDir != image.DataDir {
			t.Errorf("serve reads %s, want the volume %s", cfg.DataDir, image.DataDir)
		}
		if len(serve.Ports) != 1 || serve.Ports[0].ContainerPort != image.Port || serve.Ports[0].Name != "http" {
			t.Errorf("ports %+v, want http on %d", serve.Ports, image.Port)
		}
	})

	t.Run("the init containers import the datasets readiness requires", func(t *testing.T) {
		var imported []string
		for _, c := range pod.InitContainers {
			if ic := configs[c.Name]; ic != nil && ic.DataDir == cfg.DataDir {
				imported = append(imported, ic.Dataset)
			}
		}
		for _, d := range cfg.Server.ReadyDatasets {
			if !slices.Contains(imported, d) {
				t.Errorf("/readyz requires %s, which no init container imports into %s (they import %v)", d, cfg.DataDir, imported)
			}
		}
	})

	t.Run("the grace period covers the drain and the shutdown", func(t *testing.T) {
		grace := time.Duration(deref(pod.TerminationGracePeriodSeconds)) * time.Second
		var preStop time.Duration
		if serve.Lifecycle != nil && serve.Lifecycle.PreStop != nil {
			if serve.Lifecycle.PreStop.Sleep == nil {
				t.Fatalf("preStop %+v: the image has no shell; only a sleep action can wait", serve.Lifecycle.PreStop)
			}
			preStop = time.Duration(serve.Lifecycle.PreStop.Sleep.Seconds) * time.Second
		}
		need := preStop + cfg.Server.DrainDelay + cfg.Server.ShutdownTimeout + 5*time.Second
		if grace < need {
			t.Errorf("terminationGracePeriodSeconds %s, want at least %s: preStop %s + drain %s + shutdown %s + 5s", grace, need, preStop, cfg.Server.DrainDelay, cfg.Server.ShutdownTimeout)
		}
		rp := serve.ReadinessProbe
		if rp == nil {
			t.Fatal("no readiness probe")
		}
		// Endpoints stop sending once the probe has failed enough times;
		// the drain must last that long.
		if notReady := time.Duration(rp.PeriodSeconds*rp.FailureThreshold) * time.Second; cfg.Server.DrainDelay < notReady {
			t.Errorf("drain_delay %s is shorter than the readiness probe takes to fail (%s)", cfg.Server.DrainDelay, notReady)
		}
	})

	t.Run("the probes run the image's healthcheck", func(t *testing.T) {
		probes := []struct {
			name  string
			probe *corev1.Probe
			want  []string
		}{
			{"startup", serve.StartupProbe, image.Healthcheck},
			{"liveness", serve.LivenessProbe, image.Healthcheck},
			{"readiness", serve.ReadinessProbe, append(slices.Clone(image.Healthcheck), "--ready")},
		}
		for _, p := range probes {
			if p.probe == nil || p.probe.Exec == nil || !slices.Equal(p.probe.Exec.Command, p.want) {
				t.Errorf("%s probe %+v, want exec %q", p.name, p.probe, p.want)
				continue
			}
			if _, port, _ := net.SplitHostPort(p.want[slices.Index(p.want, "--addr")+1]); port != strconv.Itoa(image.Port) {
				t.Errorf("%s probe asks port %s, serve listens on %d", p.name, port, image.Port)
			}
			mustParseCommand(t, p.want)
		}
	})

	t.Run("resources hold the dataset twice", func(t *testing.T) {
		for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
			req, limit := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]
			if req.Cmp(*resource.NewQuantity(smallServeRSS, resource.BinarySI)) < 0 || limit.Cmp(*resource.NewQuantity(2*smallServeRSS, resource.BinarySI)) < 0 {
				t.Errorf("container %s: memory request %s, limit %s; want at least %d MiB and twice that", c.Name, req.String(), limit.String(), smallServeRSS>>20)
			}
		}
	})

	t.Run("the Service, budget and autoscaler select serve", func(t *testing.T) {
		labels := dep.Spec.Template.Labels
		svc := m.services["cityfinder"]
		if svc == nil || !selects(svc.Spec.Selector, labels) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != serve.Ports[0].Name {
			t.Errorf("Service cityfinder %+v does not send to serve's port %s", svc, serve.Ports[0].Name)
		}
		if len(m.pdbs) != 1 || m.pdbs[0].Spec.Selector == nil || !selects(m.pdbs[0].Spec.Selector.MatchLabels, labels) {
			t.Errorf("PodDisruptionBudgets %+v, want one that selects serve's pods", m.pdbs)
		}
		if len(m.hpas) != 1 || m.hpas[0].Spec.ScaleTargetRef.Kind != "Deployment" || m.hpas[0].Spec.ScaleTargetRef.Name != dep.Name ||
			deref(m.hpas[0].Spec.MinReplicas) < 2 {
			t.Errorf("HorizontalPodAutoscalers %+v, want one of Deployment %s keeping 2 replicas, as the budget needs", m.hpas, dep.Name)
		}
	})

	t.Run("the limiter's Redis is the Service of redis.yaml", func(t *testing.T) {
		if cfg.Limiter.RedisURL == "" {
			t.Skip("no limiter.redis_url: each replica counts on its own")
		}
		u, err := url.Parse(cfg.Limiter.RedisURL)
		if err != nil {
			t.Fatal(err)
		}
		svc := m.services[u.Hostname()]
		if svc == nil || len(svc.Spec.Ports) != 1 || strconv.Itoa(int(svc.Spec.Ports[0].Port)) != u.Port() {
			t.Fatalf("limiter.redis_url %s names no Service of the manifests on its port", cfg.Limiter.RedisURL)
		}
		redis := m.deployments[u.Hostname()]
		if redis == nil || !selects(svc.Spec.Selector, redis.Spec.Template.Labels) {
			t.Errorf("Service %s selects no Deployment of the manifests", svc.Name)
		}
	})
}

// mustLoadContainer loads the configuration a container's command line
// gives, as the command's PersistentPreRunE does: its flags, the image's
// environment and its own, and the file of --config (or CITYFINDER_CONFIG),
// read from the ConfigMap that the pod mounts there.
func mustLoadContainer(t *testing.T, m manifests, pod corev1.PodSpec, c corev1.Container, args []string) *config {
	t.Helper()
	env := map[string]string{}
	for _, e := range image.Env {
		name, value, _ := strings.Cut(e, "=")
		env[name] = value
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("env %s comes from elsewhere: this test reads only values", e.Name)
		}
		env[e.Name] = e.Value
	}
	for _, s := range settings {
		t.Setenv(s.env, "") // an empty variable is an unset one
	}
	for name, value := range env {
		if strings.HasPrefix(name, "CITYFINDER_") {
			t.Setenv(name, value)
		}
	}

	args = slices.Clone(args)
	if i := slices.Index(args, "--"+settingConfig.flag); i >= 0 && i+1 < len(args) {
		args[i+1] = mustMountedFile(t, m, pod, c, args[i+1])
	} else if path := env[settingConfig.env]; path != "" {
		t.Setenv(settingConfig.env, mustMountedFile(t, m, pod, c, path))
	}
	cmd := mustParseCommand(t, args)
	cfg, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return cfg
}

// mustParseCommand finds the command of a command line ("cityfinder
// serve --addr …") in the real command tree and parses its flags.
func mustParseCommand(t *testing.T, args []string) *cobra.Command {
	t.Helper()
	if len(args) == 0 || args[0] != "cityfinder" {
		t.Fatalf("command line %q does not run cityfinder", args)
	}
	root := newRootCmd()
	cmd, rest, err := root.Find(args[1:])
	if err != nil || cmd == root {
		if len(args) > 1 && args[1] == "healthcheck" {
			t.Skipf("this tree has no healthcheck command yet (issue 25 item 2): %v", err)
		}
		t.Fatalf("%s: no such command: %v", strings.Join(args, " "), err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	if extra := cmd.Flags().Args(); len(extra) > 0 {
		t.Fatalf("%s: arguments %q that no flag takes", strings.Join(args, " "), extra)
	}
	return cmd
}

// mustMountedFile writes the ConfigMap key that the pod mounts at path
// into a file of the test's, and returns that file's path.
func mustMountedFile(t *testing.T, m manifests, pod corev1.PodSpec, c corev1.Container, path string) string {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		key, ok := strings.CutPrefix(path, vm.MountPath+"/")
		if !ok {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name != vm.Name || v.ConfigMap == nil {
				continue
			}
			cm := m.configMaps[v.ConfigMap.Name]
			if cm == nil || cm.Data[key] == "" {
				t.Fatalf("%s: ConfigMap %s has no key %s", path, v.ConfigMap.Name, key)
			}
			file := filepath.Join(t.TempDir(), key)
			if err := os.WriteFile(file, []byte(cm.Data[key]), 0o644); err != nil {
				t.Fatal(err)
			}
			return file
		}
	}
	t.Fatalf("container %s mounts no ConfigMap at %s", c.Name, path)
	return ""
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

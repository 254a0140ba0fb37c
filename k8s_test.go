package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// The Kubernetes example (examples/k8s) as a cluster would read it, with no
// cluster: the manifests parsed as YAML, the overlays applied as kustomize
// applies their JSON patches, and what must hold together checked (the
// service account, the init step's files, the reports in the pods' logs,
// the labels, the zone spread, the shared volume, the image). Then the
// pods' command lines run against loopback servers, their logs interleaved
// as `kubectl logs --prefix` gives them and merged by `pinprobe report -`;
// the init step's script runs against a stand-in for the API server.

const (
	k8sDir        = "examples/k8s"
	k8sJobFile    = k8sDir + "/indexed-job.yaml"
	k8sReadme     = k8sDir + "/README.md"
	k8sMergeFile  = k8sDir + "/shared-volume/merge-job.yaml"
	k8sDockerfile = k8sDir + "/Dockerfile"
	k8sIndexEnv   = "JOB_COMPLETION_INDEX"
	k8sIndexField = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
	k8sZoneLabel  = "topology.kubernetes.io/zone"
)

// k8sObject is the part of a Kubernetes object the test reads.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		AccessModes    []string `yaml:"accessModes"` // PersistentVolumeClaim
		CompletionMode string   `yaml:"completionMode"`
		Completions    int      `yaml:"completions"`
		Parallelism    int      `yaml:"parallelism"`
		Template       struct {
			Metadata struct {
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec k8sPod `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
	Rules []struct { // Role, ClusterRole
		APIGroups []string `yaml:"apiGroups"`
		Resources []string `yaml:"resources"`
		Verbs     []string `yaml:"verbs"`
	} `yaml:"rules"`
	RoleRef struct { // RoleBinding, ClusterRoleBinding
		Kind string `yaml:"kind"`
		Name string `yaml:"name"`
	} `yaml:"roleRef"`
	Subjects []struct {
		Kind      string  `yaml:"kind"`
		Name      string  `yaml:"name"`
		Namespace *string `yaml:"namespace"`
	} `yaml:"subjects"`
}

type k8sPod struct {
	ServiceAccountName string `yaml:"serviceAccountName"`
	SecurityContext    struct {
		RunAsNonRoot bool  `yaml:"runAsNonRoot"`
		RunAsUser    int64 `yaml:"runAsUser"`
		FSGroup      int64 `yaml:"fsGroup"`
	} `yaml:"securityContext"`
	TopologySpreadConstraints []struct {
		MaxSkew           int    `yaml:"maxSkew"`
		TopologyKey       string `yaml:"topologyKey"`
		WhenUnsatisfiable string `yaml:"whenUnsatisfiable"`
		LabelSelector     struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"labelSelector"`
	} `yaml:"topologySpreadConstraints"`
	InitContainers []k8sContainer `yaml:"initContainers"`
	Containers     []k8sContainer `yaml:"containers"`
	Volumes        []k8sVolume    `yaml:"volumes"`
}

type k8sVolume struct {
	Name                  string `yaml:"name"`
	PersistentVolumeClaim *struct {
		ClaimName string `yaml:"claimName"`
	} `yaml:"persistentVolumeClaim"`
	EmptyDir *struct{} `yaml:"emptyDir"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			FieldRef *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

// envFrom is the field path container c's variable name comes from, ""
// when it has none.
func (c *k8sContainer) envFrom(name string) string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			return e.ValueFrom.FieldRef.FieldPath
		}
	}
	return ""
}

// envValue is container c's literal value of variable name.
func (c *k8sContainer) envValue(name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// readYAMLDocs parses every document of a multi-document YAML file.
func readYAMLDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", path, len(docs)+1, err)
		}
		docs = append(docs, d)
	}
	return docs
}

// kustomize builds a kustomization's objects as `kubectl apply -k DIR`
// would for what the example uses: resources (files and directories of
// kustomizations) and JSON 6902 patches (add, replace, test) aimed at a kind
// and a name.
func kustomize(t *testing.T, dir string) []map[string]any {
	t.Helper()
	var k struct {
		Resources []string `yaml:"resources"`
		Patches   []struct {
			Target struct {
				Kind string `yaml:"kind"`
				Name string `yaml:"name"`
			} `yaml:"target"`
			Patch string `yaml:"patch"`
		} `yaml:"patches"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	var objs []map[string]any
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			objs = append(objs, kustomize(t, p)...)
		} else {
			objs = append(objs, readYAMLDocs(t, p)...)
		}
	}
	for _, p := range k.Patches {
		var ops []struct {
			Op    string `yaml:"op"`
			Path  string `yaml:"path"`
			Value any    `yaml:"value"`
		}
		if err := yaml.Unmarshal([]byte(p.Patch), &ops); err != nil || len(ops) == 0 {
			t.Fatalf("%s: a patch that is no JSON patch: %v", dir, err)
		}
		hit := 0
		for i, o := range objs {
			meta, _ := o["metadata"].(map[string]any)
			if o["kind"] != p.Target.Kind || meta["name"] != p.Target.Name {
				continue
			}
			hit++
			var v any = o
			for _, op := range ops {
				if v, err = jsonPatch(v, strings.Split(op.Path, "/")[1:], op.Op, op.Value); err != nil {
					t.Fatalf("%s: %s %s: %v", dir, op.Op, op.Path, err)
				}
			}
			objs[i] = v.(map[string]any)
		}
		if hit != 1 {
			t.Fatalf("%s: a patch's target %s %s matches %d objects; want 1", dir, p.Target.Kind, p.Target.Name, hit)
		}
	}
	return objs
}

// jsonPatch applies one operation of RFC 6902 at path (its tokens) in v.
func jsonPatch(v any, path []string, op string, value any) (any, error) {
	if len(path) == 0 {
		switch op {
		case "replace", "add":
			return value, nil
		case "test":
			if fmt.Sprint(v) != fmt.Sprint(value) {
				return nil, fmt.Errorf("test: %v is not %v", v, value)
			}
			return v, nil
		}
		return nil, fmt.Errorf("op %q", op)
	}
	key := strings.NewReplacer("~1", "/", "~0", "~").Replace(path[0])
	switch n := v.(type) {
	case map[string]any:
		child, ok := n[key]
		if !ok && !(op == "add" && len(path) == 1) {
			return nil, fmt.Errorf("no %q", key)
		}
		c, err := jsonPatch(child, path[1:], op, value)
		if err != nil {
			return nil, err
		}
		n[key] = c
		return n, nil
	case []any:
		i, err := strconv.Atoi(key)
		if key == "-" {
			i, err = len(n), nil
		}
		if err != nil || i < 0 || i > len(n) || (i == len(n) && !(op == "add" && len(path) == 1)) {
			return nil, fmt.Errorf("index %q of %d", key, len(n))
		}
		if op == "add" && len(path) == 1 {
			return slices.Insert(n, i, value), nil
		}
		c, err := jsonPatch(n[i], path[1:], op, value)
		if err != nil {
			return nil, err
		}
		n[i] = c
		return n, nil
	}
	return nil, fmt.Errorf("%q inside a %T", key, v)
}

// k8sObjects reads built objects as the test reads them.
func k8sObjects(t *testing.T, docs []map[string]any) []k8sObject {
	t.Helper()
	var objs []k8sObject
	for i, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var o k8sObject
		if err := yaml.Unmarshal(b, &o); err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			t.Fatalf("object %d has no apiVersion, kind or metadata.name", i)
		}
		objs = append(objs, o)
	}
	return objs
}

func findObject(t *testing.T, objs []k8sObject, kind, name string) *k8sObject {
	t.Helper()
	for i := range objs {
		if objs[i].Kind == kind && (name == "" || objs[i].Metadata.Name == name) {
			return &objs[i]
		}
	}
	t.Fatalf("no %s %q among the manifests", kind, name)
	return nil
}

func hasKind(objs []k8sObject, kind string) bool {
	return slices.ContainsFunc(objs, func(o k8sObject) bool { return o.Kind == kind })
}

// claimMount is where container c mounts the claim of pod p, and the
// claim's name.
func claimMount(t *testing.T, p *k8sPod, c *k8sContainer) (mount, claim string, readOnly bool) {
	t.Helper()
	for _, v := range p.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				return m.MountPath, v.PersistentVolumeClaim.ClaimName, m.ReadOnly
			}
		}
	}
	t.Fatalf("container %s mounts no persistent volume claim", c.Name)
	return "", "", false
}

// emptyDirMount is where c mounts p's emptyDir volume named name.
func emptyDirMount(p *k8sPod, c *k8sContainer, name string) (mount string, readOnly bool) {
	for _, v := range p.Volumes {
		if v.Name != name || v.EmptyDir == nil {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == name {
				return m.MountPath, m.ReadOnly
			}
		}
	}
	return "", false
}

// k8sJob is the Job of built objects and its pod's parts.
type k8sJob struct {
	job         *k8sObject
	pod         *k8sPod
	probe, init *k8sContainer
	n           int
}

func jobOf(t *testing.T, objs []k8sObject) k8sJob {
	t.Helper()
	job := findObject(t, objs, "Job", "pinprobe")
	n := job.Spec.Completions
	if job.Spec.CompletionMode != "Indexed" || n < 2 || job.Spec.Parallelism != n {
		t.Fatalf("job: completionMode %q, completions %d, parallelism %d; want Indexed, N>1 pods all at once",
			job.Spec.CompletionMode, n, job.Spec.Parallelism)
	}
	pod := &job.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.InitContainers) != 1 {
		t.Fatalf("job pod: %d containers, %d init containers; want 1 and 1", len(pod.Containers), len(pod.InitContainers))
	}
	return k8sJob{job: job, pod: pod, probe: &pod.Containers[0], init: &pod.InitContainers[0], n: n}
}

// argValue is the value of --name=VALUE among args, "" when absent.
func argValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// mergeCommand is the merge the recipe hands out: every pod's log of the
// Job, prefixed, whole, into pinprobe report -.
var mergeCommand = regexp.MustCompile(`kubectl logs -l ([a-z./-]+)=([a-z0-9-]+) --prefix --tail=-1 \| \S*pinprobe report -`)

// bindCommand is the node reader's binding the recipe hands out.
var bindCommand = regexp.MustCompile(`kubectl create clusterrolebinding pinprobe-node-reader-\$NS --clusterrole=(\S+) --serviceaccount=\$NS:(\S+)`)

// TestExampleKubernetes: the manifests hold together, the default and
// each overlay.
func TestExampleKubernetes(t *testing.T) {
	t.Parallel()
	objs := k8sObjects(t, kustomize(t, k8sDir))
	base := readYAMLDocs(t, k8sJobFile)
	if len(base) != len(objs) {
		t.Fatalf("kustomization: %d objects; %s has %d", len(objs), k8sJobFile, len(base))
	}
	j := jobOf(t, objs)
	pod, probe, initC := j.pod, j.probe, j.init
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser == 0 {
		t.Errorf("job pod security context %+v: want non-root", pod.SecurityContext)
	}

	// No shared storage on the default path: the report leaves through the
	// log, the last thing the probe writes.
	if hasKind(objs, "PersistentVolumeClaim") || slices.ContainsFunc(pod.Volumes, func(v k8sVolume) bool { return v.PersistentVolumeClaim != nil }) {
		t.Errorf("the default path has a persistent volume claim; it needs none")
	}
	if argValue(probe.Args, "format") != "log-lines" || argValue(probe.Args, "output") != "" {
		t.Errorf("container %s args %q: want --format=log-lines and no file", probe.Name, probe.Args)
	}
	if a := j.job.Spec.Template.Metadata.Annotations["kubectl.kubernetes.io/default-container"]; a != probe.Name {
		t.Errorf("default container %q; kubectl logs must read %s's log, not the init step's", a, probe.Name)
	}

	// RBAC in any namespace: the Job reader is a Role bound by a
	// RoleBinding whose subject names no namespace (the binding's own); the
	// node reader's binding, which must name one, is the command the recipe
	// hands out, not a manifest.
	if pod.ServiceAccountName == "" {
		t.Fatal("job pod: no serviceAccountName; the init step cannot read its Job")
	}
	findObject(t, objs, "ServiceAccount", pod.ServiceAccountName)
	for _, o := range objs {
		if o.Metadata.Namespace != "" || o.Kind == "ClusterRoleBinding" {
			t.Errorf("%s %s: namespace %q; nothing may name a namespace, or the recipe works in that one only", o.Kind, o.Metadata.Name, o.Metadata.Namespace)
		}
	}
	bind := findObject(t, objs, "RoleBinding", "")
	role := findObject(t, objs, bind.RoleRef.Kind, bind.RoleRef.Name)
	if bind.RoleRef.Kind != "Role" || len(bind.Subjects) != 1 || bind.Subjects[0].Kind != "ServiceAccount" ||
		bind.Subjects[0].Name != pod.ServiceAccountName || bind.Subjects[0].Namespace != nil {
		t.Errorf("role binding %+v, subjects %+v; want a Role bound to the service account %s, no namespace named", bind.RoleRef, bind.Subjects, pod.ServiceAccountName)
	}
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].APIGroups, []string{"batch"}) || !slices.Equal(role.Rules[0].Resources, []string{"jobs"}) || !slices.Equal(role.Rules[0].Verbs, []string{"get"}) {
		t.Errorf("role rules %+v; want get on batch jobs and nothing more", role.Rules)
	}
	jobText, err := os.ReadFile(k8sJobFile)
	if err != nil {
		t.Fatal(err)
	}
	recipe, err := os.ReadFile(k8sReadme)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("docs", "saved-reports.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string][]byte{k8sJobFile: jobText, k8sReadme: recipe} {
		m := bindCommand.FindSubmatch(text)
		if m == nil {
			t.Errorf("%s: no kubectl create clusterrolebinding command for the node reader", name)
			continue
		}
		cr := findObject(t, objs, "ClusterRole", string(m[1]))
		if string(m[2]) != pod.ServiceAccountName || len(cr.Rules) != 1 || !slices.Equal(cr.Rules[0].Resources, []string{"nodes"}) || !slices.Equal(cr.Rules[0].Verbs, []string{"get"}) {
			t.Errorf("%s binds %s to %s (rules %+v); want the pods' service account %s, get on nodes only", name, m[2], m[1], cr.Rules, pod.ServiceAccountName)
		}
	}

	// The merge reads every pod's log of this Job: the label kubectl
	// selects is the Job controller's, the one the init step reads its
	// Job's name from.
	for name, text := range map[string][]byte{k8sJobFile: jobText, k8sReadme: recipe, "docs/saved-reports.md": readme} {
		m := mergeCommand.FindSubmatch(text)
		if m == nil || string(m[1]) != "job-name" || string(m[2]) != j.job.Metadata.Name {
			t.Errorf("%s: merge command %q; want kubectl logs -l job-name=%s --prefix --tail=-1 | pinprobe report -", name, m, j.job.Metadata.Name)
		}
	}
	for env, field := range map[string]string{
		"JOB_NAME":  "metadata.labels['job-name']",
		"NAMESPACE": "metadata.namespace",
		"NODE_NAME": "spec.nodeName",
		"POD_ZONE":  "metadata.labels['" + k8sZoneLabel + "']",
	} {
		if got := initC.envFrom(env); got != field {
			t.Errorf("init container: %s from %q; want %s", env, got, field)
		}
	}
	if probe.envFrom(k8sIndexEnv) != k8sIndexField {
		t.Errorf("container %s: no env %s from %s", probe.Name, k8sIndexEnv, k8sIndexField)
	}

	// The init step's files: the start and the vantage, on an emptyDir it
	// writes and the probe reads.
	info := map[string]string{}
	for _, flag := range []string{"vantage", "start-at"} {
		v, ok := strings.CutPrefix(argValue(probe.Args, flag), "@")
		if !ok {
			t.Fatalf("container %s args %q: no --%s=@FILE", probe.Name, probe.Args, flag)
		}
		dir := filepath.Dir(v)
		var vol string
		for _, m := range probe.VolumeMounts {
			if m.MountPath == dir {
				vol = m.Name
			}
		}
		initMount, initRO := emptyDirMount(pod, initC, vol)
		if probeMount, _ := emptyDirMount(pod, probe, vol); vol == "" || probeMount != dir || initMount == "" || initRO {
			t.Fatalf("--%s's file %s is not on an emptyDir volume the init container writes (volume %q, init mount %q)", flag, v, vol, initMount)
		}
		info[flag] = initMount + "/" + filepath.Base(v)
	}
	if len(initC.Command) != 3 || initC.Command[0] != "sh" || initC.Command[1] != "-c" {
		t.Fatalf("init container command %q: want sh -c SCRIPT", initC.Command)
	}
	k8sInitScript(t, initC, info, findObject(t, objs, "RoleBinding", "").Metadata.Name)

	// The spread over zones: preferred by default (a cluster of one zone
	// runs the pods), required in every-zone/, nothing else changed.
	spread := func(p *k8sPod) string {
		for _, c := range p.TopologySpreadConstraints {
			if c.TopologyKey == k8sZoneLabel {
				for k, v := range c.LabelSelector.MatchLabels {
					if j.job.Spec.Template.Metadata.Labels[k] != v {
						t.Errorf("the zone spread selects %s=%s; the pods are labelled %v", k, v, j.job.Spec.Template.Metadata.Labels)
					}
				}
				if c.MaxSkew != 1 || len(c.LabelSelector.MatchLabels) == 0 {
					t.Errorf("the zone spread: maxSkew %d, selector %v; want 1, the pods' label", c.MaxSkew, c.LabelSelector.MatchLabels)
				}
				return c.WhenUnsatisfiable
			}
		}
		return ""
	}
	if got := spread(pod); got != "ScheduleAnyway" {
		t.Errorf("the default zone spread is %q; want ScheduleAnyway (kind has one zone)", got)
	}
	zones := k8sObjects(t, kustomize(t, k8sDir+"/every-zone"))
	if got := spread(jobOf(t, zones).pod); got != "DoNotSchedule" || len(zones) != len(objs) {
		t.Errorf("every-zone/: the zone spread is %q, %d objects; want DoNotSchedule, the same %d objects", got, len(zones), len(objs))
	}

	// shared-volume/: the claim the pods write is ReadWriteMany, each pod
	// its index's file, and the merge Job reads exactly those, from it.
	shared := k8sObjects(t, kustomize(t, k8sDir+"/shared-volume"))
	sj := jobOf(t, shared)
	mount, claim, ro := claimMount(t, sj.pod, sj.probe)
	pvc := findObject(t, shared, "PersistentVolumeClaim", claim)
	if !slices.Contains(pvc.Spec.AccessModes, "ReadWriteMany") || ro || sj.pod.SecurityContext.FSGroup == 0 {
		t.Errorf("claim %s: access modes %v, mounted read-only %v, fsGroup %d; pods on %d nodes write it at once: want ReadWriteMany, writable, an fsGroup",
			claim, pvc.Spec.AccessModes, ro, sj.pod.SecurityContext.FSGroup, sj.n)
	}
	if want := mount + "/part-$(" + k8sIndexEnv + ").json"; argValue(sj.probe.Args, "output") != want {
		t.Errorf("shared-volume/: args %q; want --output=%s", sj.probe.Args, want)
	}
	merges := k8sObjects(t, readYAMLDocs(t, k8sMergeFile))
	mpod := &findObject(t, merges, "Job", "").Spec.Template.Spec
	mc := &mpod.Containers[0]
	mmount, mclaim, _ := claimMount(t, mpod, mc)
	var inputs, wrote []string
	for _, a := range mc.Args[1:] {
		if !strings.HasPrefix(a, "-") {
			inputs = append(inputs, a)
		}
	}
	for i := range sj.n {
		wrote = append(wrote, mmount+"/part-"+strconv.Itoa(i)+".json")
	}
	if mclaim != claim || mc.Args[0] != "report" || !slices.Equal(inputs, wrote) || !mpod.SecurityContext.RunAsNonRoot {
		t.Errorf("the merge Job reads %q from claim %s (args %q); the %d pods write %q to %s", inputs, mclaim, mc.Args, sj.n, wrote, claim)
	}

	// The image the Dockerfile builds is the one every Job runs.
	image := k8sDockerImage(t)
	if probe.Image != image || sj.probe.Image != image || mc.Image != image {
		t.Errorf("images: probe %q, shared-volume probe %q, merge %q; the Dockerfile builds %q", probe.Image, sj.probe.Image, mc.Image, image)
	}
}

// k8sPodArgs is a pod's command line run here: the target the loopback
// fleet's, the pod's paths under local ones, the index i, a short run.
func k8sPodArgs(probe *k8sContainer, i int, f *testserver.Fleet, local func(string) string) []string {
	var args []string
	for _, a := range probe.Args {
		a = strings.ReplaceAll(a, "$("+k8sIndexEnv+")", strconv.Itoa(i))
		switch {
		case strings.HasPrefix(a, "https://"):
			continue // the target, replaced by the loopback fleet's
		case strings.HasPrefix(a, "--rate="):
			a = "--rate=400"
		case strings.HasPrefix(a, "--duration="):
			a = "--duration=1s"
		}
		args = append(args, local(a))
	}
	return append(args, "-n", "100", "--no-preflight", "--resolve", f.Resolve(), f.URL())
}

// TestExampleKubernetesRun: the pods' own command lines, run here at once
// against a loopback fleet, each from its zone, wait for their shared start
// and write their reports into their logs (stdout and stderr as a container
// log mixes them); the recipe's merge command reads them interleaved with
// kubectl's prefixes and merges the three. The shared-volume option's pods
// and merge Job do the same through files.
func TestExampleKubernetesRun(t *testing.T) {
	t.Parallel()
	j := jobOf(t, k8sObjects(t, kustomize(t, k8sDir)))
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	infoDir := filepath.Dir(strings.TrimPrefix(argValue(j.probe.Args, "vantage"), "@"))
	start := time.Now().Add(800 * time.Millisecond).UTC().Truncate(time.Millisecond) // as a report keeps it
	pods := make([]podRun, j.n)
	var wg sync.WaitGroup
	for i := range j.n {
		dir := t.TempDir()
		zone := "zone-" + string(rune('a'+i))
		for name, content := range map[string]string{"vantage": zone, "start-at": start.Format(time.RFC3339Nano) + "+0s"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		args := k8sPodArgs(j.probe, i, f, func(a string) string { return strings.Replace(a, infoDir+"/", dir+"/", 1) })
		wg.Go(func() {
			code, stdout, stderr := pinprobe(t, args...)
			if code != exitOK || !strings.Contains(stderr, "for --start-at") {
				t.Errorf("pod %d: pinprobe %q: exit %d\n%s", i, args, code, stderr)
			}
			pods[i] = podRun{name: fmt.Sprintf("pinprobe-%d-%05d", i, 17*i), log: stderr + stdout}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	merged := filepath.Join(t.TempDir(), "merged.json")
	var out, errb bytes.Buffer
	if code := runWith(t.Context(), []string{"report", "-o", merged, "-"}, strings.NewReader(interleave(pods)), &out, &errb); code != exitOK {
		t.Fatalf("kubectl logs ... | pinprobe report -: exit %d\n%s", code, errb.String())
	}
	for _, want := range []string{"MERGED from 3 reports", "BY VANTAGE", "zone-a", "zone-b", "zone-c"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the merge has no %q:\n%s", want, out.String())
		}
	}
	rep := readSaved(t, merged)
	// The three pods run in this one test process at once: on a busy
	// machine some requests are dropped (a full suite counted 300 sent and
	// 47 dropped), so only the bounds of -n are held.
	tot := rep.Totals
	if len(rep.Vantages) != j.n || tot.Requests > int64(j.n*100) || tot.Requests < int64(j.n*50) {
		t.Errorf("merged: %d vantages, %d requests and %d dropped; want %d, and %d to %d requests", len(rep.Vantages), tot.Requests, tot.Dropped, j.n, j.n*50, j.n*100)
	}
	for _, in := range rep.Inputs {
		if !strings.HasPrefix(in.File, "pod/pinprobe-") || in.StartedAt.Before(start) {
			t.Errorf("input %s started at %s; want a pod, started at --start-at %s or after", in.File, in.StartedAt.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
		}
	}

	// shared-volume/: the same pods also write files to the claim, and the
	// merge Job's command line merges them.
	sj := jobOf(t, k8sObjects(t, kustomize(t, k8sDir+"/shared-volume")))
	mount, _, _ := claimMount(t, sj.pod, sj.probe)
	mc := &k8sObjects(t, readYAMLDocs(t, k8sMergeFile))[0].Spec.Template.Spec.Containers[0]
	mmount, _, _ := claimMount(t, &k8sObjects(t, readYAMLDocs(t, k8sMergeFile))[0].Spec.Template.Spec, mc)
	claimDir, info := t.TempDir(), t.TempDir()
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	for i := range sj.n {
		for name, content := range map[string]string{"vantage": "zone-" + string(rune('a'+i)), "start-at": past} {
			if err := os.WriteFile(filepath.Join(info, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		args := k8sPodArgs(sj.probe, i, f, func(a string) string {
			return strings.Replace(strings.Replace(a, mount+"/", claimDir+"/", 1), infoDir+"/", info+"/", 1)
		})
		if code, _, stderr := pinprobe(t, args...); code != exitOK {
			t.Fatalf("shared-volume pod %d: pinprobe %q: exit %d\n%s", i, args, code, stderr)
		}
	}
	var margs []string
	for _, a := range mc.Args {
		margs = append(margs, strings.Replace(a, mmount+"/", claimDir+"/", 1))
	}
	code, stdout, stderr := pinprobe(t, margs...)
	if code != exitOK || !strings.Contains(stdout, "MERGED from 3 reports") || !strings.Contains(stdout, "zone-c") {
		t.Errorf("shared-volume merge: pinprobe %q: exit %d\n%s%s", margs, code, stderr, stdout)
	}
	if _, err := os.Stat(filepath.Join(claimDir, "merged.json")); err != nil {
		t.Errorf("shared-volume merge kept no merged.json: %v", err)
	}
}

// k8sInitScript runs the init container's script with a stand-in curl
// for the API server: the Job's creation time gives the start every pod
// waits for; the pod's own zone label wins, then its node's (the API
// server's answer, pretty-printed, as it answers curl), then the node's
// name where the node may not be read (no binding); a Job that may not be
// read (no RoleBinding) stops the pod, naming the binding.
func k8sInitScript(t *testing.T, c *k8sContainer, files map[string]string, binding string) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh to run the init container's script with")
	}
	const created = "2026-12-05T16:58:30Z"
	job := `{
  "kind": "Job",
  "metadata": {
    "name": "pinprobe",
    "namespace": "probes",
    "creationTimestamp": "` + created + `",
    "labels": {"job-name": "pinprobe"}
  },
  "spec": {"template": {"metadata": {"creationTimestamp": null}}}
}`
	node := `{
  "kind": "Node",
  "metadata": {
    "name": "aks-pool-12345-vmss000001",
    "labels": {
      "kubernetes.io/hostname": "aks-pool-12345-vmss000001",
      "topology.kubernetes.io/region": "westeurope",
      "topology.kubernetes.io/zone": "westeurope-2"
    }
  }
}`
	answer := func(body string) string { return "cat <<'EOF'\n" + body + "\nEOF\n" }
	forbidden := "echo 'curl: (22) The requested URL returned error: 403' >&2; exit 22\n"
	stub := func(jobs, nodes string) string {
		return "#!/bin/sh\nfor a; do url=$a; done\ncase $url in\n" +
			"https://kubernetes.default.svc/apis/batch/v1/namespaces/probes/jobs/pinprobe) " + jobs + ";;\n" +
			"https://kubernetes.default.svc/api/v1/nodes/aks-pool-12345-vmss000001) " + nodes + ";;\n" +
			"*) echo \"curl: unexpected $url\" >&2; exit 6;;\nesac\n"
	}
	lead, err := time.ParseDuration(c.envValue("START_LEAD"))
	if err != nil {
		t.Fatalf("init container: START_LEAD %q: %v", c.envValue("START_LEAD"), err)
	}
	for _, tt := range []struct {
		name, curl, podZone, vantage, fail string
	}{
		{"the pod's zone", stub(answer(job), forbidden), "westeurope-1", "westeurope-1", ""},
		{"the node's zone", stub(answer(job), answer(node)), "", "westeurope-2", ""},
		{"the node's name", stub(answer(job), forbidden), "", "aks-pool-12345-vmss000001", ""},
		{"no job", stub(forbidden, answer(node)), "", "", "is the RoleBinding " + binding + " there?"},
	} {
		bin, dir := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(bin, "curl"), []byte(tt.curl), 0o700); err != nil {
			t.Fatal(err)
		}
		s := c.Command[2]
		for _, f := range files {
			s = strings.ReplaceAll(s, filepath.Dir(f)+"/", dir+"/")
		}
		s = strings.ReplaceAll(s, "sa=/var/run/secrets/kubernetes.io/serviceaccount", "sa="+dir)
		if err := os.WriteFile(filepath.Join(dir, "token"), []byte("test-token"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), sh, "-c", s)
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "NODE_NAME=aks-pool-12345-vmss000001", "NAMESPACE=probes",
			"JOB_NAME=pinprobe", "POD_ZONE=" + tt.podZone, "START_LEAD=" + c.envValue("START_LEAD")}
		out, err := cmd.CombinedOutput()
		if tt.fail != "" {
			if err == nil || !strings.Contains(string(out), tt.fail) {
				t.Errorf("init script (%s): %v, %q; want it to fail saying %q", tt.name, err, out, tt.fail)
			}
			continue
		}
		if err != nil {
			t.Fatalf("init script (%s): %v\n%s", tt.name, err, out)
		}
		read := func(flag string) string {
			b, err := os.ReadFile(filepath.Join(dir, filepath.Base(files[flag])))
			if err != nil {
				t.Fatalf("init script (%s) wrote no file for --%s: %v\n%s", tt.name, flag, err, out)
			}
			return strings.TrimSpace(string(b))
		}
		if v := read("vantage"); v != tt.vantage || report.CheckVantage(v) != nil {
			t.Errorf("init script (%s): vantage %q; want %q, a vantage name", tt.name, v, tt.vantage)
		}
		c0, _ := time.Parse(time.RFC3339, created)
		if at, err := parseStartAt(read("start-at"), c0); err != nil || !at.Equal(c0.Add(lead)) {
			t.Errorf("init script (%s): start %q read as %v, %v; want the Job's creation and %s", tt.name, read("start-at"), at, err, lead)
		}
	}
}

// k8sDockerImage checks the Dockerfile — a multi-stage build of the static
// binary onto a minimal base, run as a non-root user, whose entry point is
// the binary built — and returns the image name its build command tags,
// which the manifests' build command must tag too.
func k8sDockerImage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(k8sDockerfile)
	if err != nil {
		t.Fatal(err)
	}
	var froms, users, entry []string
	var built, copied [2]string // build output; copy from the build stage: src, dst
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, strings.Join(f[1:], " "))
		case "USER":
			users = append(users, f[1])
		case "ENTRYPOINT":
			entry = f[1:]
		case "RUN":
			if m := regexp.MustCompile(`CGO_ENABLED=0 go build .*-o (\S+) \.`).FindStringSubmatch(l); m != nil {
				built[0] = m[1]
			}
		case "COPY":
			if len(f) == 4 && strings.HasPrefix(f[1], "--from=") {
				copied = [2]string{f[2], f[3]}
			}
		}
	}
	if len(froms) != 2 || !strings.HasSuffix(froms[0], " AS build") || !strings.Contains(froms[1], "distroless/static") {
		t.Errorf("Dockerfile stages %q: want a build stage, then distroless/static", froms)
	}
	// The build stage's Go is go.mod's, exactly; the binary is named by a
	// build argument (the context has no .git to read a commit from); the
	// context leaves out a binary built in the checkout.
	goVersion := goModLine(t, "go")
	if !strings.Contains(string(data), "ARG GO_VERSION="+goVersion+"\n") || len(froms) == 0 || froms[0] != "golang:${GO_VERSION} AS build" {
		t.Errorf("Dockerfile: the build stage %q is not pinned to go.mod's Go %s (ARG GO_VERSION)", froms, goVersion)
	}
	if !strings.Contains(string(data), "ARG VERSION=") || !strings.Contains(string(data), "-X main.buildVersion=${VERSION}") {
		t.Errorf("Dockerfile: no VERSION build argument naming the binary (-X main.buildVersion)")
	}
	if ignore, err := os.ReadFile(k8sDockerfile + ".dockerignore"); err != nil || !strings.Contains("\n"+string(ignore)+"\n", "\n/pinprobe\n") {
		t.Errorf("%s.dockerignore does not leave out the checkout's own pinprobe binary (%v)", k8sDockerfile, err)
	}
	if len(users) != 1 || users[0] == "0" || strings.HasPrefix(users[0], "root") || strings.HasPrefix(users[0], "0:") {
		t.Errorf("Dockerfile USER %q: want one non-root user", users)
	}
	if built[0] == "" || copied[0] != built[0] || len(entry) != 1 || entry[0] != `["`+copied[1]+`"]` {
		t.Errorf("Dockerfile: builds %q, copies %q, enters %q: want the static binary built, copied and run", built[0], copied, entry)
	}
	buildCmd := regexp.MustCompile(`docker build -f ` + regexp.QuoteMeta(k8sDockerfile) + ` -t (\S+) \.`)
	m := buildCmd.FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("Dockerfile: no build command (docker build -f %s -t IMAGE .) in its comments", k8sDockerfile)
	}
	manifests, err := os.ReadFile(k8sJobFile)
	if err != nil {
		t.Fatal(err)
	}
	if mm := buildCmd.FindStringSubmatch(string(manifests)); mm == nil || mm[1] != m[1] {
		t.Errorf("%s says to build %v; the Dockerfile builds %s", k8sJobFile, mm, m[1])
	}
	return m[1]
}

// TestExampleKubernetesWatch: the watch's manifests hold together (the
// Deployment's selector, Service and PodMonitor find its pods by labels it
// has; the port they name, the annotation's and --listen's are the
// container's; its vantage label, its zone and --vantage agree), the pod
// runs non-root on a read-only root with resources requested, its image is
// the Job's, and its own arguments (the URL pointed at a loopback fleet)
// watch, every series labelled with its vantage.
func TestExampleKubernetesWatch(t *testing.T) {
	t.Parallel()
	const file = k8sDir + "/watch/watch.yaml"
	var dep struct {
		Metadata struct {
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Template struct {
				Metadata struct {
					Labels      map[string]string `yaml:"labels"`
					Annotations map[string]string `yaml:"annotations"`
				} `yaml:"metadata"`
				Spec struct {
					NodeSelector    map[string]string `yaml:"nodeSelector"`
					SecurityContext struct {
						RunAsNonRoot bool `yaml:"runAsNonRoot"`
					} `yaml:"securityContext"`
					Containers []struct {
						Image string   `yaml:"image"`
						Args  []string `yaml:"args"`
						Ports []struct {
							Name          string `yaml:"name"`
							ContainerPort int    `yaml:"containerPort"`
						} `yaml:"ports"`
						Resources struct {
							Requests map[string]string `yaml:"requests"`
						} `yaml:"resources"`
						SecurityContext struct {
							ReadOnlyRootFilesystem bool `yaml:"readOnlyRootFilesystem"`
						} `yaml:"securityContext"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	var svc, mon struct {
		Spec struct {
			Selector map[string]any `yaml:"selector"`
			Ports    []struct {
				TargetPort string `yaml:"targetPort"`
			} `yaml:"ports"`
			PodMetricsEndpoints []struct {
				Port string `yaml:"port"`
			} `yaml:"podMetricsEndpoints"`
		} `yaml:"spec"`
	}
	kinds := map[string]any{"Deployment": &dep, "Service": &svc, "PodMonitor": &mon}
	for _, d := range readYAMLDocs(t, file) {
		b, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if v := kinds[fmt.Sprint(d["kind"])]; v != nil {
			if err := yaml.Unmarshal(b, v); err != nil {
				t.Fatal(err)
			}
			delete(kinds, fmt.Sprint(d["kind"]))
		}
	}
	if len(kinds) > 0 {
		t.Fatalf("%s lacks %v", file, kinds)
	}
	pod := dep.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers; want the watch", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	has := func(labels map[string]string, want map[string]any) bool {
		for k, v := range want {
			if labels[k] != fmt.Sprint(v) {
				return false
			}
		}
		return len(want) > 0
	}
	sel := map[string]any{}
	for k, v := range dep.Spec.Selector.MatchLabels {
		sel[k] = v
	}
	monSel, _ := mon.Spec.Selector["matchLabels"].(map[string]any)
	if !has(pod.Metadata.Labels, sel) || !has(pod.Metadata.Labels, svc.Spec.Selector) || !has(pod.Metadata.Labels, monSel) {
		t.Errorf("the pods' labels %v lack the Deployment's selector %v, the Service's %v or the PodMonitor's %v", pod.Metadata.Labels, sel, svc.Spec.Selector, monSel)
	}
	if len(c.Ports) != 1 || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != c.Ports[0].Name ||
		len(mon.Spec.PodMetricsEndpoints) != 1 || mon.Spec.PodMetricsEndpoints[0].Port != c.Ports[0].Name ||
		pod.Metadata.Annotations["prometheus.io/port"] != fmt.Sprint(c.Ports[0].ContainerPort) || argValue(c.Args, "listen") != fmt.Sprintf(":%d", c.Ports[0].ContainerPort) {
		t.Errorf("ports: container %+v, Service %+v, PodMonitor %+v, annotation %q, --listen %q; want one, named alike",
			c.Ports, svc.Spec.Ports, mon.Spec.PodMetricsEndpoints, pod.Metadata.Annotations["prometheus.io/port"], argValue(c.Args, "listen"))
	}
	vantage := pod.Metadata.Labels["pinprobe.dev/vantage"]
	if vantage == "" || pod.Spec.NodeSelector["topology.kubernetes.io/zone"] != vantage || argValue(c.Args, "vantage") != vantage {
		t.Errorf("vantage label %q, zone %q, --vantage %q; want one zone", vantage, pod.Spec.NodeSelector["topology.kubernetes.io/zone"], argValue(c.Args, "vantage"))
	}
	if !pod.Spec.SecurityContext.RunAsNonRoot || !c.SecurityContext.ReadOnlyRootFilesystem || c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" {
		t.Errorf("the pod: non-root %v, read-only root %v, requests %v; want non-root, read-only, cpu and memory requested",
			pod.Spec.SecurityContext.RunAsNonRoot, c.SecurityContext.ReadOnlyRootFilesystem, c.Resources.Requests)
	}
	job := jobOf(t, k8sObjects(t, readYAMLDocs(t, k8sJobFile)))
	if want := job.pod.Containers[len(job.pod.Containers)-1].Image; c.Image != want {
		t.Errorf("image %q; the Job runs %q", c.Image, want)
	}
	// Its own arguments, the URL pointed at a loopback fleet.
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	var args []string
	for _, a := range c.Args[1:] {
		switch {
		case strings.HasPrefix(a, "--listen="):
			a = "--listen=127.0.0.1:0"
		case strings.HasPrefix(a, "https://"):
			a = f.URL()
		}
		args = append(args, a)
	}
	w := startWatch(t, append(args, "--resolve", f.Resolve())...)
	waitFor(t, 10*time.Second, "a request counted, with its vantage", func() bool {
		return strings.Contains(w.scrape(t, false), `pinprobe_requests_total{address="127.0.0.1",family="ipv4",host=`) &&
			strings.Contains(w.scrape(t, false), `vantage="`+vantage+`"`)
	})
	if code := w.stop(); code != exitOK {
		t.Errorf("the watch exited %d when stopped; want 0", code)
	}
}

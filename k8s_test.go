package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// The Kubernetes example (examples/k8s) as a cluster would read it: the
// manifests are parsed as YAML and what must hold together is checked —
// the claim the pods share exists and allows many writers, the completion
// index reaches the file each pod writes, the vantage the init container
// writes is the one pinprobe reads, the merge Job reads the files the pods
// wrote, from the same claim, and the image the Dockerfile builds is the one
// both Jobs run. Then the pods' and the merge's own command lines are run
// here against loopback servers, the init container's script against a
// stand-in for the API server.

const (
	k8sDir        = "examples/k8s"
	k8sJobFile    = k8sDir + "/indexed-job.yaml"
	k8sMergeFile  = k8sDir + "/merge-job.yaml"
	k8sDockerfile = k8sDir + "/Dockerfile"
	k8sIndexEnv   = "JOB_COMPLETION_INDEX"
	k8sIndexField = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
)

// k8sObject is the part of a Kubernetes object the test reads.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		AccessModes    []string `yaml:"accessModes"` // PersistentVolumeClaim
		CompletionMode string   `yaml:"completionMode"`
		Completions    int      `yaml:"completions"`
		Parallelism    int      `yaml:"parallelism"`
		Template       struct {
			Spec k8sPod `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
	Rules []struct { // ClusterRole
		APIGroups []string `yaml:"apiGroups"`
		Resources []string `yaml:"resources"`
		Verbs     []string `yaml:"verbs"`
	} `yaml:"rules"`
	RoleRef struct { // ClusterRoleBinding
		Kind string `yaml:"kind"`
		Name string `yaml:"name"`
	} `yaml:"roleRef"`
	Subjects []struct {
		Kind string `yaml:"kind"`
		Name string `yaml:"name"`
	} `yaml:"subjects"`
}

type k8sPod struct {
	ServiceAccountName string `yaml:"serviceAccountName"`
	SecurityContext    struct {
		RunAsNonRoot bool  `yaml:"runAsNonRoot"`
		RunAsUser    int64 `yaml:"runAsUser"`
		FSGroup      int64 `yaml:"fsGroup"`
	} `yaml:"securityContext"`
	InitContainers []k8sContainer `yaml:"initContainers"`
	Containers     []k8sContainer `yaml:"containers"`
	Volumes        []struct {
		Name                  string `yaml:"name"`
		PersistentVolumeClaim *struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
		EmptyDir *struct{} `yaml:"emptyDir"`
	} `yaml:"volumes"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
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

// readManifests parses every document of a multi-document YAML file.
func readManifests(t *testing.T, path string) []k8sObject {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var objs []k8sObject
	for {
		var o k8sObject
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", path, len(objs)+1, err)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			t.Fatalf("%s: document %d has no apiVersion, kind or metadata.name", path, len(objs)+1)
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

func TestExampleKubernetes(t *testing.T) {
	t.Parallel()
	objs := readManifests(t, k8sJobFile)
	merges := readManifests(t, k8sMergeFile)

	// The probe Job: indexed, N pods at once, non-root.
	job := findObject(t, objs, "Job", "pinprobe")
	n := job.Spec.Completions
	if job.Spec.CompletionMode != "Indexed" || n < 2 || job.Spec.Parallelism != n {
		t.Fatalf("job: completionMode %q, completions %d, parallelism %d; want Indexed, N>1 pods all at once",
			job.Spec.CompletionMode, n, job.Spec.Parallelism)
	}
	pod := &job.Spec.Template.Spec
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser == 0 || pod.SecurityContext.FSGroup == 0 {
		t.Errorf("job pod security context %+v: want non-root, with an fsGroup so it may write the claim", pod.SecurityContext)
	}
	if len(pod.Containers) != 1 || len(pod.InitContainers) != 1 {
		t.Fatalf("job pod: %d containers, %d init containers; want 1 and 1", len(pod.Containers), len(pod.InitContainers))
	}
	probe, initC := &pod.Containers[0], &pod.InitContainers[0]

	// The claim it mounts exists and allows many writers.
	mount, claim, ro := claimMount(t, pod, probe)
	pvc := findObject(t, objs, "PersistentVolumeClaim", claim)
	if !slices.Contains(pvc.Spec.AccessModes, "ReadWriteMany") || ro {
		t.Errorf("claim %s: access modes %v, mounted read-only %v; pods on %d nodes write it at once: want ReadWriteMany, writable",
			claim, pvc.Spec.AccessModes, ro, n)
	}

	// The service account may read nodes, for the init container's zone.
	if pod.ServiceAccountName == "" {
		t.Fatal("job pod: no serviceAccountName; the init container cannot read its node")
	}
	findObject(t, objs, "ServiceAccount", pod.ServiceAccountName)
	bind := findObject(t, objs, "ClusterRoleBinding", "")
	role := findObject(t, objs, "ClusterRole", bind.RoleRef.Name)
	if len(bind.Subjects) != 1 || bind.Subjects[0].Kind != "ServiceAccount" || bind.Subjects[0].Name != pod.ServiceAccountName {
		t.Errorf("binding subjects %+v; want the service account %s", bind.Subjects, pod.ServiceAccountName)
	}
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Resources, []string{"nodes"}) || !slices.Equal(role.Rules[0].Verbs, []string{"get"}) {
		t.Errorf("cluster role rules %+v; want get on nodes and nothing more", role.Rules)
	}

	// The completion index reaches the file name.
	indexed := false
	for _, e := range probe.Env {
		indexed = indexed || e.Name == k8sIndexEnv && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == k8sIndexField
	}
	if !indexed {
		t.Errorf("container %s: no env %s from %s", probe.Name, k8sIndexEnv, k8sIndexField)
	}
	wantOut := "--output=" + mount + "/part-$(" + k8sIndexEnv + ").json"
	if !slices.Contains(probe.Args, wantOut) {
		t.Fatalf("container %s args %q: want %s, a file per index on the claim", probe.Name, probe.Args, wantOut)
	}

	// The vantage: the init container writes it to a shared emptyDir, the
	// probe reads it with --vantage @FILE.
	var vantageArg string
	for _, a := range probe.Args {
		if v, ok := strings.CutPrefix(a, "--vantage=@"); ok {
			vantageArg = v
		}
	}
	if vantageArg == "" {
		t.Fatalf("container %s args %q: no --vantage=@FILE", probe.Name, probe.Args)
	}
	vdir, vname := filepath.Dir(vantageArg), filepath.Base(vantageArg)
	var vvol string
	for _, m := range probe.VolumeMounts {
		if m.MountPath == vdir {
			vvol = m.Name
		}
	}
	initMount, initRO := emptyDirMount(pod, initC, vvol)
	if probeMount, _ := emptyDirMount(pod, probe, vvol); vvol == "" || probeMount != vdir || initMount == "" || initRO {
		t.Fatalf("the vantage file %s is not on an emptyDir volume the init container writes (volume %q, init mount %q)", vantageArg, vvol, initMount)
	}
	if len(initC.Command) != 3 || initC.Command[0] != "sh" || initC.Command[1] != "-c" {
		t.Fatalf("init container command %q: want sh -c SCRIPT", initC.Command)
	}
	script := initC.Command[2]
	if !strings.Contains(script, "> "+initMount+"/"+vname) {
		t.Errorf("the init script does not write %s/%s:\n%s", initMount, vname, script)
	}
	k8sInitScript(t, script, initMount)

	// The image the Dockerfile builds is the one both Jobs run.
	image := k8sDockerImage(t)
	merge := findObject(t, merges, "Job", "")
	mpod := &merge.Spec.Template.Spec
	if len(mpod.Containers) != 1 {
		t.Fatalf("merge job: %d containers; want 1", len(mpod.Containers))
	}
	mc := &mpod.Containers[0]
	if probe.Image != image || mc.Image != image {
		t.Errorf("images: probe %q, merge %q; the Dockerfile builds %q", probe.Image, mc.Image, image)
	}
	if !mpod.SecurityContext.RunAsNonRoot {
		t.Error("merge pod: not runAsNonRoot")
	}

	// The merge reads, from the same claim, exactly the files the pods
	// wrote.
	mmount, mclaim, _ := claimMount(t, mpod, mc)
	if mclaim != claim {
		t.Fatalf("merge job mounts claim %q; the pods wrote to %q", mclaim, claim)
	}
	if len(mc.Args) == 0 || mc.Args[0] != "report" {
		t.Fatalf("merge args %q: want report FILE...", mc.Args)
	}
	var inputs []string
	for _, a := range mc.Args[1:] {
		if !strings.HasPrefix(a, "-") {
			inputs = append(inputs, a)
		}
	}
	var wrote []string
	for i := range n {
		wrote = append(wrote, mmount+"/part-"+strconv.Itoa(i)+".json")
	}
	if !slices.Equal(inputs, wrote) {
		t.Fatalf("the merge reads %q; the %d pods write %q", inputs, n, wrote)
	}

	// Run it: each pod's command line (its URL and the claim moved to
	// loopback and a temporary directory), each from its own vantage, then
	// the merge's.
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	claimDir, vantageDir := t.TempDir(), t.TempDir()
	local := func(a string) string {
		a = strings.Replace(a, mount+"/", claimDir+"/", 1)
		a = strings.Replace(a, mmount+"/", claimDir+"/", 1)
		return strings.Replace(a, vdir+"/", vantageDir+"/", 1)
	}
	for i := range n {
		zone := "zone-" + string(rune('a'+i))
		if err := os.WriteFile(filepath.Join(vantageDir, vname), []byte(zone+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
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
		args = append(args, "-n", "100", "--no-preflight", "--resolve", f.Resolve(), f.URL())
		if code, _, stderr := pinprobe(t, args...); code != exitOK {
			t.Fatalf("pod %d: pinprobe %q: exit %d\n%s", i, args, code, stderr)
		}
	}
	var margs []string
	for _, a := range mc.Args {
		margs = append(margs, local(a))
	}
	code, stdout, stderr := pinprobe(t, margs...)
	if code != exitOK {
		t.Fatalf("merge: pinprobe %q: exit %d\n%s", margs, code, stderr)
	}
	for _, want := range []string{"MERGED from 3 reports", "BY VANTAGE", "zone-a", "zone-b", "zone-c"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the merge's log has no %q:\n%s", want, stdout)
		}
	}
	merged := readSaved(t, filepath.Join(claimDir, "merged.json"))
	// Every planned request is in the merge, sent or dropped: on a busy
	// machine under -race a pod's workers were all busy now and then (a
	// fresh-clone CI run counted 265 sent of the 300), which the merge
	// counts as drops.
	tot := merged.Totals
	if len(merged.Vantages) != n || tot.Requests+tot.Dropped != int64(n*100) || tot.Requests < int64(n*50) {
		t.Errorf("merged.json: %d vantages, %d requests and %d dropped; want %d, and %d in all, most sent", len(merged.Vantages), tot.Requests, tot.Dropped, n, n*100)
	}
}

// k8sInitScript runs the init container's script with a stand-in curl:
// the API server's answer for a node with a zone label (pretty-printed, as
// it answers curl) gives that zone; a refused request (no RBAC) falls back
// to the node's name.
func k8sInitScript(t *testing.T, script, mount string) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh to run the init container's script with")
	}
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
	for _, tt := range []struct {
		name, curl, want string
	}{
		{"zone", "#!/bin/sh\ncat <<'EOF'\n" + node + "\nEOF\n", "westeurope-2"},
		{"forbidden", "#!/bin/sh\necho 'curl: (22) The requested URL returned error: 403' >&2\nexit 22\n", "aks-pool-12345-vmss000001"},
	} {
		bin, dir := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(bin, "curl"), []byte(tt.curl), 0o700); err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(script, mount+"/", dir+"/")
		s = strings.ReplaceAll(s, "sa=/var/run/secrets/kubernetes.io/serviceaccount", "sa="+dir)
		if err := os.WriteFile(filepath.Join(dir, "token"), []byte("test-token"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), sh, "-c", s)
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "NODE_NAME=aks-pool-12345-vmss000001"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("init script (%s): %v\n%s", tt.name, err, out)
		}
		got, err := os.ReadFile(filepath.Join(dir, "name"))
		if err != nil {
			t.Fatalf("init script (%s) wrote no vantage: %v\n%s", tt.name, err, out)
		}
		name := strings.TrimSpace(string(got))
		if name != tt.want || report.CheckVantage(name) != nil {
			t.Errorf("init script (%s): vantage %q; want %q, a vantage name", tt.name, name, tt.want)
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

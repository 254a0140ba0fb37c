package testserver

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ProcessSpec describes a process for StartProcess.
type ProcessSpec struct {
	// Name names the process in messages and its log file ("nginx").
	Name string
	// Path is the executable; Args its arguments.
	Path string
	Args []string
	// Dir is the working directory and holds the log file NAME.log; a new
	// t.TempDir() when "".
	Dir string
	// Listen are the loopback addresses and ports the process must listen
	// on before StartProcess returns.
	Listen []netip.AddrPort
	// ReadyTimeout bounds the wait for Listen; 10s when 0.
	ReadyTimeout time.Duration
}

// Process is a process started by StartProcess in its own process group.
type Process struct {
	// Name is the spec's name.
	Name string
	// Cmd is the started command.
	Cmd *exec.Cmd
	// PGID is the process group of the process and all its children.
	PGID int
	// Dir is the working directory.
	Dir string

	logPath string
	exited  chan struct{} // closed when Cmd.Wait returns
	waitErr error
	once    sync.Once
}

// stopGrace is how long a process group has to exit after SIGTERM before
// it gets SIGKILL.
const stopGrace = 3 * time.Second

// StartProcess starts spec's executable in a new process group (Setpgid),
// its stdout and stderr going to Dir/NAME.log, and waits until the group
// listens on every address of spec.Listen: on Linux it checks the
// listening sockets belong to the group (/proc), so a port another process
// took in the meantime does not pass for ready. When the test ends, or at
// Stop, the whole group gets SIGTERM, then SIGKILL after a grace, and the
// test fails if a process of the group is still alive. If the test binary
// itself dies, the process gets SIGTERM (Pdeathsig).
func StartProcess(t testing.TB, spec ProcessSpec) *Process {
	t.Helper()
	if spec.Dir == "" {
		spec.Dir = t.TempDir()
	}
	p, err := startProcess(spec)
	if p != nil {
		t.Cleanup(func() {
			if err := p.Stop(); err != nil {
				t.Error(err)
			}
		})
	}
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return p
}

// startProcess starts and waits for spec; on error, a non-nil Process must
// still be stopped.
func startProcess(spec ProcessSpec) (*Process, error) {
	if spec.ReadyTimeout <= 0 {
		spec.ReadyTimeout = 10 * time.Second
	}
	logPath := filepath.Join(spec.Dir, spec.Name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	defer logf.Close() // the child has its own copy
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	p := &Process{Name: spec.Name, Cmd: cmd, PGID: cmd.Process.Pid, Dir: spec.Dir, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitListening(spec.Listen, spec.ReadyTimeout); err != nil {
		return p, fmt.Errorf("%s: %w; its output:\n%s", spec.Name, err, p.Log())
	}
	return p, nil
}

// waitListening polls until the group listens on every address, the
// process exits, or limit passes.
func (p *Process) waitListening(addrs []netip.AddrPort, limit time.Duration) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		missing := p.notListening(addrs)
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exited (%v) before it listened on %v", p.waitErr, missing)
		case <-deadline.C:
			return fmt.Errorf("did not listen on %v within %v", missing, limit)
		case <-tick.C:
		}
	}
}

// notListening returns the addresses the group does not listen on yet.
func (p *Process) notListening(addrs []netip.AddrPort) []netip.AddrPort {
	var missing []netip.AddrPort
	if runtime.GOOS != "linux" {
		for _, a := range addrs {
			c, err := net.DialTimeout("tcp", a.String(), 200*time.Millisecond)
			if err != nil {
				missing = append(missing, a)
				continue
			}
			c.Close()
		}
		return missing
	}
	listening := groupListening(p.PGID)
	for _, a := range addrs {
		if !listening[netip.AddrPortFrom(a.Addr().Unmap(), a.Port())] {
			missing = append(missing, a)
		}
	}
	return missing
}

// Log returns what the process wrote to stdout and stderr so far.
func (p *Process) Log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return string(b)
}

// Stop ends the process group: SIGTERM to the group, SIGKILL after a
// grace if the leader has not exited, then a check that no process of the
// group is left. It returns an error naming the processes left. Only the
// first call acts; the test's cleanup calls it.
func (p *Process) Stop() error {
	var err error
	p.once.Do(func() { err = p.stop() })
	return err
}

func (p *Process) stop() error {
	syscall.Kill(-p.PGID, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		syscall.Kill(-p.PGID, syscall.SIGKILL)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			return fmt.Errorf("%s (pid %d) still running 5s after SIGKILL", p.Name, p.PGID)
		}
	}
	// The leader is gone; its children may take a moment longer.
	if groupGone(p.PGID, stopGrace) {
		return nil
	}
	syscall.Kill(-p.PGID, syscall.SIGKILL)
	if groupGone(p.PGID, stopGrace) {
		return nil
	}
	if left := GroupProcesses(p.PGID); len(left) > 0 {
		return fmt.Errorf("%s: processes %v of group %d still alive after SIGTERM and SIGKILL", p.Name, left, p.PGID)
	}
	return nil
}

// groupGone waits up to limit for group pgid to have no live process.
func groupGone(pgid int, limit time.Duration) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(GroupProcesses(pgid)) > 0 {
		select {
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// GroupProcesses lists the live processes (zombies excluded) of process
// group pgid, from /proc; nil where there is no /proc.
func GroupProcesses(pgid int) []int {
	if pgid <= 0 { // no group was started: not every process of group 0
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pg, ok := procStat(pid)
		if ok && pg == pgid && state != "Z" && state != "X" {
			out = append(out, pid)
		}
	}
	return out
}

// procStat reads the state and process group of pid from /proc/PID/stat.
func procStat(pid int) (state string, pgid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command may hold spaces and parentheses
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp …
	if len(f) < 3 {
		return "", 0, false
	}
	pg, err := strconv.Atoi(f[2])
	if err != nil {
		return "", 0, false
	}
	return f[0], pg, true
}

// groupListening returns the TCP addresses that a process of group pgid
// listens on.
func groupListening(pgid int) map[netip.AddrPort]bool {
	inodes := map[string]bool{}
	for _, pid := range GroupProcesses(pgid) {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			l, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	out := map[netip.AddrPort]bool{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, s := range listeningSockets(file) {
			if inodes[s.inode] {
				out[s.addr] = true
			}
		}
	}
	return out
}

type procSocket struct {
	addr  netip.AddrPort
	inode string
}

// listeningSockets parses the sockets in state LISTEN of a /proc/net/tcp
// or /proc/net/tcp6 file.
func listeningSockets(file string) []procSocket {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []procSocket
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: TCP_LISTEN
			continue
		}
		ap, err := parseProcAddr(fields[1])
		if err != nil {
			continue
		}
		out = append(out, procSocket{addr: ap, inode: fields[9]})
	}
	return out
}

// parseProcAddr parses "0100007F:1F90": the address as 32-bit words in host
// byte order, in hex, and the port in hex.
func parseProcAddr(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, errors.New("no port")
	}
	raw, err := hex.DecodeString(host)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", host)
	}
	for i := 0; i < len(raw); i += 4 { // back to the bytes in memory
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	pn, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port %q", port)
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a.Unmap(), uint16(pn)), nil
}

// findBinary returns the first of candidates found (a name looked up in
// PATH, or a path). Where none is, it skips the test, or fails it when the
// environment variable CI is set: CI (.ci/run) installs the package.
func findBinary(t testing.TB, pkg string, candidates ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short leaves out the tests of real programs (%s); go test without -short runs them", pkg)
	}
	for _, c := range candidates {
		if path, err := exec.LookPath(c); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed; .ci/run installs it", pkg)
	}
	t.Skipf("%s is not installed (apt-get install %s); .ci/run installs it", pkg, pkg)
	return ""
}

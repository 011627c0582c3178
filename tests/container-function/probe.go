// What the probe mode reports of the sandbox it runs in, each as a string,
// gathered afresh for every request.

package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// probeSandbox returns the keys the probe mode adds to the ConfigMap's data.
func probeSandbox() map[string]string {
	found := map[string]string{
		"uid":             strconv.Itoa(os.Getuid()),
		"gid":             strconv.Itoa(os.Getgid()),
		"pid":             strconv.Itoa(os.Getpid()),
		"hostname":        orError(os.Hostname()),
		"cwd":             orError(os.Getwd()),
		"write-root":      tryCreate("/probe-file"),
		"write-usr":       tryCreate("/usr/probe-file"),
		"write-tmp":       tryCreate("/tmp/probe-file"),
		"files":           listDir(envOr("XFN_TEST_LIST_DIR", "/opt/layered")),
		"passwd-readable": passwdReadable(),
		"net-dial":        dial(os.Getenv("XFN_TEST_DIAL")),
		"host-file":       readHead(os.Getenv("XFN_TEST_HOST_FILE")),
		"nofile":          softLimit(unix.RLIMIT_NOFILE),
		"nproc":           softLimit(unix.RLIMIT_NPROC),
		"data":            softLimit(unix.RLIMIT_DATA),
	}
	for _, entry := range os.Environ() {
		name, value, _ := strings.Cut(entry, "=")
		if strings.HasPrefix(name, "XFN_") || name == "HOME" || name == "PATH" {
			found["env-"+name] = value
		}
	}
	status := procStatus()
	found["cap-eff"] = status["CapEff"]
	found["no-new-privs"] = status["NoNewPrivs"]
	found["seccomp"] = status["Seccomp"]
	found["keyctl"] = keyctl()
	return found
}

// keyctl asks for the session keyring's id, which any process may: "ok",
// or the error's text where a seccomp filter denies the call.
func keyctl() string {
	const getKeyringID, sessionKeyring = 0, -3
	keyring := sessionKeyring
	_, _, errno := unix.Syscall(unix.SYS_KEYCTL, getKeyringID, uintptr(keyring), 0)
	if errno != 0 {
		return errno.Error()
	}
	return "ok"
}

// orError is a value, or its error's text.
func orError(value string, err error) string {
	if err != nil {
		return err.Error()
	}
	return value
}

func envOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// tryCreate creates a file: "ok" (and the file is removed again) or the
// error's text.
func tryCreate(path string) string {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err.Error()
	}
	file.Close()
	os.Remove(path)
	return "ok"
}

// listDir is a directory's entries, sorted and joined with commas, or the
// error's text.
func listDir(dir string) string {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return err.Error()
	}
	names := make([]string, len(entries))
	for i, entry := range entries {
		names[i] = entry.Name()
	}
	return strings.Join(names, ",")
}

func passwdReadable() string {
	if _, err := os.ReadFile("/etc/passwd"); err != nil {
		return "no"
	}
	return "yes"
}

// dial is the outcome of a TCP connection to address within 1 s: "ok" or
// the error's text; "skipped" without an address.
func dial(address string) string {
	if address == "" {
		return "skipped"
	}
	conn, err := net.DialTimeout("tcp", address, time.Second)
	if err != nil {
		return err.Error()
	}
	conn.Close()
	return "ok"
}

// readHead is "ok:" and the first 20 bytes of a file, or the error's text;
// "skipped" without a path.
func readHead(path string) string {
	if path == "" {
		return "skipped"
	}
	file, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer file.Close()
	head := make([]byte, 20)
	n, err := io.ReadFull(file, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return err.Error()
	}
	return "ok:" + string(head[:n])
}

// softLimit is a resource's soft limit in decimal, or "unlimited". Note
// that Go (1.19 on) raises RLIMIT_NOFILE's soft limit to the hard limit as
// the process starts, so nofile shows the hard limit it was given.
func softLimit(resource int) string {
	var limit unix.Rlimit
	if err := unix.Getrlimit(resource, &limit); err != nil {
		return err.Error()
	}
	if limit.Cur == unix.RLIM_INFINITY {
		return "unlimited"
	}
	return strconv.FormatUint(limit.Cur, 10)
}

// procStatus reads /proc/self/status into a map of field to value; a
// missing file gives the error's text under every field asked for.
func procStatus() map[string]string {
	fields := map[string]string{}
	file, err := os.Open("/proc/self/status")
	if err != nil {
		text := fmt.Sprint(err)
		fields["CapEff"], fields["NoNewPrivs"] = text, text
		return fields
	}
	defer file.Close()
	lines := bufio.NewScanner(file)
	for lines.Scan() {
		name, value, ok := strings.Cut(lines.Text(), ":")
		if ok {
			fields[name] = strings.TrimSpace(value)
		}
	}
	for _, name := range []string{"CapEff", "NoNewPrivs"} {
		if _, ok := fields[name]; !ok {
			fields[name] = "absent from /proc/self/status"
		}
	}
	return fields
}

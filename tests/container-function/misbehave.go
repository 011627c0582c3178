// The modes that misbehave before listening: forkbomb and alloc. Both run
// until a limit of the sandbox stops them; run them by hand only under
// limits (ulimit -u, prlimit --data, a pids or memory cgroup).

package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// forkbombChild marks the processes forkbomb starts, which spawn but never
// listen; everything else they get is the parent's (arguments, environment,
// stdio).
const forkbombChild = "XFN_TEST_FORKBOMB_CHILD"

// spawnForever re-executes /proc/self/exe as a forkbomb child, again and
// again, and never returns. The first failure to spawn is logged with the
// number of children started before it; after a failure it retries every
// 100 ms rather than spinning. Children that die are reaped by the kernel
// (SIGCHLD ignored) so they do not linger as zombies, and each child is
// killed when its parent dies (PR_SET_PDEATHSIG), so the tree goes with
// the process that started it.
func spawnForever(log logger) {
	signal.Ignore(syscall.SIGCHLD)
	env := os.Environ()
	if os.Getenv(forkbombChild) == "" {
		env = append(env, forkbombChild+"=1")
	}
	attr := &os.ProcAttr{
		Env:   env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	role := "parent"
	if os.Getenv(forkbombChild) != "" {
		role = "child"
	}
	log.info("forkbomb: %s %d spawning children", role, os.Getpid())
	started := 0
	failed := false
	for {
		child, err := os.StartProcess("/proc/self/exe", os.Args, attr)
		if err != nil {
			if !failed {
				log.info("forkbomb: %s %d started %d children, then: %v", role, os.Getpid(), started, err)
				failed = true
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		child.Release()
		started++
	}
}

// reserveThreads makes the Go runtime start n more OS threads now, while
// it can: n goroutines block in read(2) at once, each holding a thread,
// then are released. Idle threads are kept for reuse, so once the children
// use up every process the limit allows, the parent can still serve
// without creating a thread (which the Go runtime cannot survive failing).
func reserveThreads(log logger, n int) {
	var blocked sync.WaitGroup
	writers := make([]int, 0, n)
	for i := 0; i < n; i++ {
		var pipe [2]int
		if err := syscall.Pipe(pipe[:]); err != nil {
			break
		}
		writers = append(writers, pipe[1])
		blocked.Add(1)
		go func(reader int) {
			defer blocked.Done()
			var b [1]byte
			syscall.Read(reader, b[:])
			syscall.Close(reader)
		}(pipe[0])
	}
	time.Sleep(200 * time.Millisecond)
	for _, writer := range writers {
		syscall.Write(writer, []byte{0})
		syscall.Close(writer)
	}
	blocked.Wait()
	log.info("forkbomb: %s threads before spawning", procStatus()["Threads"])
}

// kept holds every chunk alloc allocates, so none is ever collected.
var kept [][]byte

// allocate allocates memory in 16 MiB chunks and writes to every page of
// each, forever, logging every 256 MiB; it returns only by the process
// being stopped (an out-of-memory kill, or the Go runtime's "out of
// memory" fatal error under RLIMIT_DATA or RLIMIT_AS).
func allocate(log logger) {
	const chunk = 16 << 20
	const page = 4096
	for total := 0; ; {
		block := make([]byte, chunk)
		for i := 0; i < len(block); i += page {
			block[i] = 1
		}
		kept = append(kept, block)
		total += chunk
		if total%(256<<20) == 0 {
			log.info("alloc: %d MiB allocated", total>>20)
		}
	}
}

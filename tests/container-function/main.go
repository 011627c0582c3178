// A conventional Go composition function, for testing xfn's container
// runtime: a FunctionRunnerService server on grpc-go with the command line
// of function-sdk-go's template (--insecure, --address, --network,
// --tls-certs-dir, -d/--debug, --max-recv-message-size), built statically
// from Debian's packages (build.sh). What it does is chosen by the
// environment variable XFN_TEST_MODE, read once at start (README.md):
// compose (the default) and probe answer requests; forkbomb, alloc,
// never-listen, exit and slow-start misbehave in the ways a sandbox has to
// contain or report.
//
// It logs to stderr, one plain line per message (no timestamps), and writes
// "listening on ADDRESS" to stderr once it listens; ADDRESS is the real
// one, so --address 127.0.0.1:0 works.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	fnv1 "xfn.dev/containerfn/fnv1"
)

// modeVariable names the environment variable that picks the behaviour.
const modeVariable = "XFN_TEST_MODE"

// modes are the values of XFN_TEST_MODE; "" means compose.
var modes = map[string]bool{
	"compose":      true,
	"probe":        true,
	"forkbomb":     true,
	"alloc":        true,
	"never-listen": true,
	"exit":         true,
	"slow-start":   true,
}

// options are the command line's, as function-sdk-go's template has them.
type options struct {
	debug       bool
	network     string
	address     string
	tlsCertsDir string
	insecure    bool
	maxRecvMiB  int
}

// logger writes plain lines to stderr; debug lines only with -d.
type logger struct {
	debug bool
}

func (l logger) info(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (l logger) debugf(format string, args ...interface{}) {
	if l.debug {
		l.info("debug: "+format, args...)
	}
}

// fail writes a message to stderr and exits with status 2, as a command
// line error does.
func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}

// parseFlags reads the command line; Go's flag package accepts both -name
// and --name, and exits with status 2 on an unknown flag.
func parseFlags() options {
	var o options
	flag.BoolVar(&o.debug, "debug", false, "Emit debug logs in addition to info logs.")
	flag.BoolVar(&o.debug, "d", false, "Shorthand for --debug.")
	flag.StringVar(&o.network, "network", "tcp", "Network on which to listen for gRPC connections.")
	flag.StringVar(&o.address, "address", ":9443", "Address at which to listen for gRPC connections.")
	flag.StringVar(&o.tlsCertsDir, "tls-certs-dir", os.Getenv("TLS_SERVER_CERTS_DIR"),
		"Directory of server certificates (env TLS_SERVER_CERTS_DIR); not supported by this test function.")
	flag.BoolVar(&o.insecure, "insecure", false, "Run without mTLS credentials (required by this test function).")
	flag.IntVar(&o.maxRecvMiB, "max-recv-message-size", 4, "Maximum size of received messages in MB.")
	flag.IntVar(&o.maxRecvMiB, "max-recv-msg-size", 4, "Same as --max-recv-message-size.")
	flag.Parse()
	if flag.NArg() > 0 {
		fail("unexpected argument %q", flag.Arg(0))
	}
	if o.maxRecvMiB <= 0 {
		fail("--max-recv-message-size must be a positive number of MB, not %d", o.maxRecvMiB)
	}
	return o
}

// checkCredentials does what function-sdk-go's Serve does with the TLS
// flags: --insecure wins over a certificates directory; without either
// there are no credentials. Serving mTLS is out of scope here.
func checkCredentials(o options, log logger) {
	switch {
	case o.insecure:
		if o.tlsCertsDir != "" {
			log.debugf("--insecure given: ignoring the certificates in %s", o.tlsCertsDir)
		}
	case o.tlsCertsDir != "":
		fail("TLS (--tls-certs-dir or TLS_SERVER_CERTS_DIR=%s) is not supported by this test function; pass --insecure", o.tlsCertsDir)
	default:
		fail("TLS is needed: no credentials given; pass --tls-certs-dir (or set TLS_SERVER_CERTS_DIR), or --insecure to serve without TLS")
	}
}

func main() {
	o := parseFlags()
	log := logger{debug: o.debug}

	mode := os.Getenv(modeVariable)
	if mode == "" {
		mode = "compose"
	}
	if !modes[mode] {
		known := make([]string, 0, len(modes))
		for m := range modes {
			known = append(known, m)
		}
		sort.Strings(known)
		fail("unknown %s %q (known: %s)", modeVariable, mode, strings.Join(known, ", "))
	}
	checkCredentials(o, log)
	log.debugf("mode %s, pid %d", mode, os.Getpid())

	switch mode {
	case "exit":
		log.info("line one")
		log.info("line two")
		log.info("exiting with status 3")
		os.Exit(3)
	case "never-listen":
		log.info("not listening")
		// A sleeping timer, not select{}: with nothing left to wake it the
		// Go runtime would call that a deadlock and crash.
		for {
			time.Sleep(time.Hour)
		}
	case "alloc":
		allocate(log)
	case "forkbomb":
		if os.Getenv(forkbombChild) != "" {
			spawnForever(log)
		}
		reserveThreads(log, 8)
		go spawnForever(log)
	case "slow-start":
		delay := 2.0
		if text := os.Getenv("XFN_TEST_DELAY"); text != "" {
			var err error
			if delay, err = strconv.ParseFloat(text, 64); err != nil || delay < 0 {
				fail("XFN_TEST_DELAY must be a number of seconds, not %q", text)
			}
		}
		log.info("slow-start: waiting %g s before listening", delay)
		time.Sleep(time.Duration(delay * float64(time.Second)))
	}

	serve(o, log, function{log: log, probe: mode == "probe"})
}

// serve listens and answers RunFunction until the process is killed. Like
// function-sdk-go, it installs no signal handler: SIGTERM ends it through
// the Go runtime's default handling.
func serve(o options, log logger, fn fnv1.FunctionRunnerServiceServer) {
	listener, err := net.Listen(o.network, o.address)
	if err != nil {
		log.info("cannot listen for %s connections at address %q: %v", o.network, o.address, err)
		os.Exit(1)
	}
	server := grpc.NewServer(grpc.CustomCodec(codec{}), grpc.MaxRecvMsgSize(o.maxRecvMiB*1024*1024))
	fnv1.RegisterFunctionRunnerServiceServer(server, fn)
	log.info("listening on %s", listener.Addr())
	if err := server.Serve(listener); err != nil {
		log.info("cannot serve gRPC connections: %v", err)
		os.Exit(1)
	}
}

// codec marshals with google.golang.org/protobuf: grpc-go 1.33's default
// codec is protobuf API v1 and panics on API v2 generated messages. It
// marshals deterministically (map entries sorted), so a response's bytes
// depend only on its content.
type codec struct{}

func (codec) Marshal(v interface{}) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("not a protobuf message: %T", v)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

func (codec) Unmarshal(data []byte, v interface{}) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("not a protobuf message: %T", v)
	}
	return proto.Unmarshal(data, m)
}

func (codec) String() string { return "proto" }

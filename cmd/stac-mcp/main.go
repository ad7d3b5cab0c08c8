// Command stac-mcp is an MCP server that lets an AI assistant discover and
// inspect geospatial data in any STAC catalog.
//
//	stac-mcp [stdio]                      serve MCP over stdio (the default)
//	stac-mcp http [--addr 127.0.0.1:8080]  serve MCP over Streamable HTTP at /mcp
//	stac-mcp call [--text] TOOL [JSON]     run one tool and print its result
//	stac-mcp tools [--json]                list the tools
//
// stdout carries only the MCP protocol (stdio) or the command's result;
// every log line goes to stderr.
package main

// The files derived from this command's settings, tools and docs
// (manifest.json, server.json, the docs' images) are written by
// internal/gen.
//
//go:generate go run ./internal/gen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv, os.Environ))
}

// exitError carries a process exit code (1: the tool failed, 2: usage).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// run is main without the process: testable with any args, streams and
// environment (env looks a variable up, environ lists them all).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) (string, bool), environ func() []string) int {
	cfg, err := loadConfig(args, env)
	if err == nil {
		cfg.UnknownEnv = append(unknownEnvWarnings(environ()), unknownCatalogHeaderWarnings(environ(), cfg.NamedCatalogs)...)
		err = dispatch(ctx, cfg, stdin, stdout, stderr)
	}
	if err == nil {
		return 0
	}
	_, _ = fmt.Fprintln(stderr, "stac-mcp:", err) // stderr is the last place to report to
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.code == 2 {
			_, _ = fmt.Fprintln(stderr, "Run 'stac-mcp --help' for the commands, flags and environment variables.")
		}
		return ee.code
	}
	return 1
}

func dispatch(ctx context.Context, cfg *config, stdin io.Reader, stdout, stderr io.Writer) error {
	switch {
	case cfg.Help:
		return writeHelp(stdout)
	case cfg.Version:
		return writeVersion(stdout)
	}
	switch cfg.Command {
	case "", "stdio":
		if len(cfg.Args) > 0 {
			return usageError("stdio takes no arguments, got %q", cfg.Args)
		}
		return runStdio(ctx, cfg, stdin, stdout, stderr)
	case "http":
		if len(cfg.Args) > 0 {
			return usageError("http takes no arguments (use --addr HOST:PORT), got %q", cfg.Args)
		}
		return runHTTP(ctx, cfg, stderr)
	case "call":
		return runCall(ctx, cfg, stdout, stderr)
	case "tools":
		if len(cfg.Args) > 0 {
			return usageError("tools takes no arguments, got %q", cfg.Args)
		}
		return runTools(ctx, cfg, stdout, stderr)
	case "help":
		return writeHelp(stdout)
	case "version":
		return writeVersion(stdout)
	}
	return usageError("unknown command %q; accepted: stdio (default), http, call, tools, help, version", cfg.Command)
}

// Command animus-dist writes the release artifacts behind `make dist`: one
// tarball per plugin and platform plus SHA256SUMS (see package dist).
//
//	animus-dist -version V -out dist -license LICENSE -mtime UNIX \
//	    -platform linux_amd64=bin [-platform linux_arm64=DIR] <plugin dir>...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/animus-plugins/animus-plugins/tools/dist"
)

type platforms []dist.Platform

func (p *platforms) String() string { return fmt.Sprint(*p) }
func (p *platforms) Set(s string) error {
	pl, err := dist.ParsePlatform(s)
	if err == nil {
		*p = append(*p, pl)
	}
	return err
}

func main() {
	os.Exit(run())
}

func run() int {
	var (
		cfg     dist.Config
		plats   platforms
		license string
		mtime   string
	)
	fs := flag.NewFlagSet("animus-dist", flag.ContinueOnError)
	fs.StringVar(&cfg.Version, "version", "", "version stamped into the binaries (git describe)")
	fs.StringVar(&cfg.OutDir, "out", "dist", "output directory")
	fs.StringVar(&license, "license", "LICENSE", "LICENSE file to ship in every tarball")
	fs.StringVar(&mtime, "mtime", os.Getenv("SOURCE_DATE_EPOCH"), "mtime of every tarball entry, Unix seconds (default $SOURCE_DATE_EPOCH, else 0)")
	fs.Var(&plats, "platform", "os_arch=dir holding animus-<plugin> builds (repeatable; the native one is required)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: animus-dist -version V [-out dir] [-license file] [-mtime unix] -platform os_arch=dir... <plugin dir>...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	cfg.Platforms, cfg.Plugins = plats, fs.Args()
	secs := int64(0)
	if mtime != "" {
		var err error
		if secs, err = strconv.ParseInt(mtime, 10, 64); err != nil {
			fmt.Fprintf(os.Stderr, "animus-dist: -mtime %q: %v\n", mtime, err)
			return 2
		}
	}
	cfg.MTime = time.Unix(secs, 0)
	text, err := os.ReadFile(license)
	if err != nil {
		fmt.Fprintf(os.Stderr, "animus-dist: %v\n", err)
		return 1
	}
	cfg.License = text

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	arts, err := dist.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "animus-dist: %v\n", err)
		return 1
	}
	for _, a := range arts {
		st, err := os.Stat(a.Path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "animus-dist: %v\n", err)
			return 1
		}
		fmt.Printf("%s  %9d  %s\n", a.SHA256, st.Size(), filepath.Base(a.Path))
	}
	fmt.Printf("wrote %d tarballs and %s to %s\n", len(arts), dist.SumsFile, cfg.OutDir)
	return 0
}

package dist

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Platform is one os/arch build of every plugin, found in BinDir as
// animus-<dir>.
type Platform struct {
	OS, Arch string
	BinDir   string
}

// Name is the platform's part of an artifact name, e.g. "linux_amd64".
func (p Platform) Name() string { return p.OS + "_" + p.Arch }

// ParsePlatform reads "linux_amd64=/path/to/bin".
func ParsePlatform(s string) (Platform, error) {
	name, dir, ok := strings.Cut(s, "=")
	goos, arch, ok2 := strings.Cut(name, "_")
	if !ok || !ok2 || goos == "" || arch == "" || dir == "" {
		return Platform{}, fmt.Errorf("platform %q: want os_arch=dir, e.g. linux_amd64=bin", s)
	}
	return Platform{OS: goos, Arch: arch, BinDir: dir}, nil
}

// Config is one `make dist` run.
type Config struct {
	Version   string     // stamped version, from git describe
	OutDir    string     // where the tarballs and SHA256SUMS go
	License   []byte     // the LICENSE file's bytes
	Platforms []Platform // must include the machine's own (for metadata)
	Plugins   []string   // plugin directory names: binary animus-<dir>
	MTime     time.Time  // every tarball entry's mtime (the commit time)
}

// Artifact is one written tarball.
type Artifact struct {
	Plugin, Platform string // "animus-queue-sqlite", "linux_amd64"
	Path             string // absolute path of the .tar.gz
	SHA256           string // hex
	Description      *Description
}

// SumsFile is the checksum file's name in OutDir.
const SumsFile = "SHA256SUMS"

// ArtifactName is the tarball name for a binary, version and platform
// (without .tar.gz it is also the top directory inside the tarball).
func ArtifactName(binary, version, platform string) string {
	return binary + "_" + version + "_" + platform
}

// Run writes every tarball and SHA256SUMS and returns the artifacts in
// SHA256SUMS order. Metadata comes from running the native binaries; builds
// for other platforms are checked for their ELF machine and stamp.
func Run(ctx context.Context, cfg Config) ([]Artifact, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	native := runtime.GOOS + "_" + runtime.GOARCH
	var nativeDir string
	for _, p := range cfg.Platforms {
		if p.Name() == native {
			nativeDir = p.BinDir
		}
	}
	if nativeDir == "" {
		return nil, fmt.Errorf("no %s build given: plugin metadata is read by running the native binaries", native)
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	descs := map[string]*Description{}
	for _, dir := range cfg.Plugins {
		bin := "animus-" + dir
		d, err := Describe(ctx, filepath.Join(nativeDir, bin), cfg.Version)
		if err != nil {
			return nil, err
		}
		if d.Manifest.Name != bin {
			return nil, fmt.Errorf("%s: manifest name is %q; the binary and the manifest must share the name (install keys on it)", bin, d.Manifest.Name)
		}
		descs[bin] = d
	}
	// Check every binary before packing any, so a bad cross build fails
	// in a second instead of after minutes of compression.
	for _, p := range cfg.Platforms {
		for _, dir := range cfg.Plugins {
			if err := cfg.checkBinary(p, "animus-"+dir); err != nil {
				return nil, err
			}
		}
	}
	var out []Artifact
	for _, p := range cfg.Platforms {
		for _, dir := range cfg.Plugins {
			bin := "animus-" + dir
			a, err := cfg.pack(p, bin, descs[bin])
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return filepath.Base(out[i].Path) < filepath.Base(out[j].Path) })
	var sums bytes.Buffer
	for _, a := range out {
		// sha256sum's text mode: hash, two spaces, file name.
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, filepath.Base(a.Path))
	}
	return out, os.WriteFile(filepath.Join(cfg.OutDir, SumsFile), sums.Bytes(), 0o644)
}

func (cfg *Config) validate() error {
	switch {
	case cfg.Version == "" || strings.ContainsAny(cfg.Version, "/ \t\n_"):
		// "_" separates the name's fields; "/" would make a directory.
		return fmt.Errorf("version %q: must be non-empty without '/', '_' or spaces", cfg.Version)
	case cfg.OutDir == "":
		return errors.New("no output directory")
	case len(cfg.License) == 0:
		return errors.New("no LICENSE text")
	case len(cfg.Platforms) == 0:
		return errors.New("no platforms")
	case len(cfg.Plugins) == 0:
		return errors.New("no plugins")
	}
	return nil
}

// checkBinary rejects a binary of the wrong architecture or without the
// version stamp. The native binary's version was also checked by running
// it; for a cross build the stamped string must at least be in its data.
func (cfg *Config) checkBinary(p Platform, bin string) error {
	path := filepath.Join(p.BinDir, bin)
	if err := checkELF(path, p); err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Contains(data, []byte(cfg.Version)) {
		return fmt.Errorf("%s: version %q is not stamped into the binary", path, cfg.Version)
	}
	return nil
}

// pack writes one binary's tarball.
func (cfg *Config) pack(p Platform, bin string, d *Description) (Artifact, error) {
	data, err := os.ReadFile(filepath.Join(p.BinDir, bin))
	if err != nil {
		return Artifact{}, err
	}
	name := ArtifactName(bin, cfg.Version, p.Name())
	entries := []Entry{
		{Name: bin, Mode: 0o755, Data: data},
		{Name: "manifest.json", Mode: 0o644, Data: append(append([]byte(nil), d.Manifest.Raw...), '\n')},
		{Name: "plugin.toml", Mode: 0o644, Data: PluginTOML(d, bin)},
		{Name: "LICENSE", Mode: 0o644, Data: cfg.License},
	}
	var buf bytes.Buffer
	if err := WriteTarGz(&buf, name, cfg.MTime, entries); err != nil {
		return Artifact{}, err
	}
	out := filepath.Join(cfg.OutDir, name+".tar.gz")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return Artifact{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	abs, err := filepath.Abs(out)
	if err != nil {
		return Artifact{}, err
	}
	return Artifact{Plugin: bin, Platform: p.Name(), Path: abs, SHA256: hex.EncodeToString(sum[:]), Description: d}, nil
}

// elfMachines maps GOARCH to the ELF machine a binary for it must carry.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

// checkELF rejects a binary built for another architecture than the
// platform it is packed as (e.g. an amd64 build left in the arm64 dir).
func checkELF(path string, p Platform) error {
	if p.OS != "linux" {
		return fmt.Errorf("%s: only linux builds are packed (cgo cross compilers exist for linux only here)", path)
	}
	want, ok := elfMachines[p.Arch]
	if !ok {
		return fmt.Errorf("%s: unknown arch %q", path, p.Arch)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF binary: %w", path, err)
	}
	defer f.Close()
	if f.Machine != want {
		return fmt.Errorf("%s: ELF machine %v, want %v for %s", path, f.Machine, want, p.Name())
	}
	return nil
}

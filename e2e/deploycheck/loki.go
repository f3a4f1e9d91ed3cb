package deploycheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Compose is the part of a docker compose file the checks read.
type Compose struct {
	Services map[string]struct {
		Image   string   `yaml:"image"`
		Command []string `yaml:"command"`
		Ports   []string `yaml:"ports"`
		Volumes []string `yaml:"volumes"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// LokiConfig is the part of a Loki configuration the checks read.
type LokiConfig struct {
	AuthEnabled *bool `yaml:"auth_enabled"`
	Server      struct {
		HTTPListenPort int `yaml:"http_listen_port"`
	} `yaml:"server"`
	Common struct {
		PathPrefix string `yaml:"path_prefix"`
		Storage    struct {
			Filesystem *struct {
				ChunksDirectory string `yaml:"chunks_directory"`
				RulesDirectory  string `yaml:"rules_directory"`
			} `yaml:"filesystem"`
		} `yaml:"storage"`
		ReplicationFactor int `yaml:"replication_factor"`
	} `yaml:"common"`
	SchemaConfig struct {
		Configs []struct {
			From        string `yaml:"from"`
			Store       string `yaml:"store"`
			ObjectStore string `yaml:"object_store"`
			Schema      string `yaml:"schema"`
		} `yaml:"configs"`
	} `yaml:"schema_config"`
	Limits struct {
		AllowStructuredMetadata *bool  `yaml:"allow_structured_metadata"`
		MaxEntriesLimitPerQuery int    `yaml:"max_entries_limit_per_query"`
		MaxQueryLength          string `yaml:"max_query_length"`
	} `yaml:"limits_config"`
	Compactor struct {
		RetentionEnabled   bool   `yaml:"retention_enabled"`
		DeleteRequestStore string `yaml:"delete_request_store"`
	} `yaml:"compactor"`
}

// Plugin defaults the deployment must accommodate (plugins/logs-loki):
// LOKI_MAX_QUERY_WINDOW defaults to 720h and a query asks for at most
// 5000 entries.
const (
	pluginQueryWindow = 720 * time.Hour
	pluginMaxLimit    = 5000
)

var lokiImage = regexp.MustCompile(`^grafana/loki:3\.\d+\.\d+$`)

// CheckLoki reads dir/docker-compose.yml and the Loki configuration it
// mounts, and returns every problem found (none = fine).
func CheckLoki(dir string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	var c Compose
	if err := readYAML(filepath.Join(dir, "docker-compose.yml"), &c); err != nil {
		return []string{err.Error()}
	}
	svc, ok := c.Services["loki"]
	if !ok {
		return []string{"docker-compose.yml: no service \"loki\""}
	}
	if !lokiImage.MatchString(svc.Image) {
		bad("image %q: want a pinned Grafana Loki 3 (grafana/loki:3.x.y)", svc.Image)
	}
	if !slices.Contains(svc.Command, "-target=all") {
		bad("command %q: want the single binary (-target=all)", svc.Command)
	}
	configPath := ""
	for _, a := range svc.Command {
		if v, ok := strings.CutPrefix(a, "-config.file="); ok {
			configPath = v
		}
	}
	if configPath == "" {
		bad("command %q: no -config.file=", svc.Command)
	}
	if !slices.Contains(svc.Ports, "127.0.0.1:3100:3100") {
		bad("ports %q: want 127.0.0.1:3100:3100 (what the README's LOKI_URL points at)", svc.Ports)
	}

	configFile := ""
	var mountTargets []string
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 {
			bad("volume %q: want source:target", v)
			continue
		}
		src, target := parts[0], parts[1]
		mountTargets = append(mountTargets, target)
		if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
			host := src
			if !filepath.IsAbs(host) {
				host = filepath.Join(dir, src)
			}
			if _, err := os.Stat(host); err != nil {
				bad("volume %q: %s does not exist", v, src)
			}
			if target == configPath {
				configFile = host
			}
		} else if _, declared := c.Volumes[src]; !declared {
			bad("volume %q: named volume %q is not declared under volumes:", v, src)
		}
	}
	if configPath != "" && configFile == "" {
		bad("-config.file=%s is not a file mounted from the repository", configPath)
	}
	if configFile == "" {
		return problems
	}

	var lc LokiConfig
	if err := readYAML(configFile, &lc); err != nil {
		return append(problems, err.Error())
	}
	name := filepath.Base(configFile)
	if lc.AuthEnabled == nil || !*lc.AuthEnabled {
		bad("%s: auth_enabled must be true (exercises X-Scope-OrgID / LOKI_TENANT_ID)", name)
	}
	if lc.Server.HTTPListenPort != 3100 {
		bad("%s: server.http_listen_port %d, want 3100", name, lc.Server.HTTPListenPort)
	}
	fs := lc.Common.Storage.Filesystem
	if fs == nil || fs.ChunksDirectory == "" {
		bad("%s: want filesystem storage (common.storage.filesystem.chunks_directory)", name)
	} else if !underAny(fs.ChunksDirectory, mountTargets) {
		bad("%s: chunks_directory %s is not on a mounted volume (data would be lost with the container)", name, fs.ChunksDirectory)
	}
	if n := len(lc.SchemaConfig.Configs); n == 0 {
		bad("%s: no schema_config.configs", name)
	} else if cur := lc.SchemaConfig.Configs[n-1]; cur.Store != "tsdb" || cur.Schema != "v13" || cur.ObjectStore != "filesystem" {
		bad("%s: newest schema is store=%s schema=%s object_store=%s, want tsdb, v13, filesystem (structured metadata needs TSDB v13)",
			name, cur.Store, cur.Schema, cur.ObjectStore)
	} else if _, err := time.Parse("2006-01-02", cur.From); err != nil {
		bad("%s: schema from %q is not a date", name, cur.From)
	}
	if lc.Limits.AllowStructuredMetadata == nil || !*lc.Limits.AllowStructuredMetadata {
		bad("%s: limits_config.allow_structured_metadata must be true", name)
	}
	if v := lc.Limits.MaxEntriesLimitPerQuery; v != 0 && v < pluginMaxLimit {
		bad("%s: max_entries_limit_per_query %d < %d, the plugin's largest query", name, v, pluginMaxLimit)
	}
	if v := lc.Limits.MaxQueryLength; v != "" {
		if d, err := time.ParseDuration(v); err != nil || d < pluginQueryWindow {
			bad("%s: max_query_length %q is shorter than the plugin's default window %v", name, v, pluginQueryWindow)
		}
	}
	if lc.Compactor.RetentionEnabled && lc.Compactor.DeleteRequestStore == "" {
		bad("%s: compactor.retention_enabled needs delete_request_store (Loki 3 refuses to start otherwise)", name)
	}
	return problems
}

func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, strings.TrimRight(d, "/")+"/") {
			return true
		}
	}
	return false
}

func readYAML(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

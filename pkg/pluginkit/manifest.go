package pluginkit

import (
	"io"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// manifest is PluginManifest as --manifest prints it, in the reference
// plugins' field order.
type manifest struct {
	Name            string           `json:"name"`
	Version         string           `json:"version"`
	PluginKind      string           `json:"plugin_kind"`
	Description     string           `json:"description"`
	ProtocolVersion string           `json:"protocol_version"`
	Capabilities    []string         `json:"capabilities"`
	EnvRequired     []envRequirement `json:"env_required,omitempty"`
}

type envRequirement struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Sensitive   bool   `json:"sensitive"`
	Required    bool   `json:"required"`
}

func (p *Plugin) manifest() manifest {
	m := manifest{
		Name:            p.Name,
		Version:         p.version(),
		PluginKind:      p.Kind,
		Description:     p.Description,
		ProtocolVersion: ProtocolVersion,
		Capabilities:    p.capabilityList(),
	}
	for _, e := range p.envVars() {
		m.EnvRequired = append(m.EnvRequired, envRequirement(e))
	}
	return m
}

// envVars is the plugin's env list plus pluginkit's own log level variable.
func (p *Plugin) envVars() []EnvVar {
	out := append([]EnvVar(nil), p.Env...)
	for _, e := range out {
		if e.Name == LogLevelEnv {
			return out
		}
	}
	return append(out, EnvVar{Name: LogLevelEnv, Description: "stderr log level: debug, info, warn (default) or error"})
}

// writeManifest writes the manifest as one line. It reads no environment
// and opens nothing, so the daemon's scrubbed probe always succeeds.
func (p *Plugin) writeManifest(w io.Writer) error {
	b, err := rustjson.Marshal(p.manifest())
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

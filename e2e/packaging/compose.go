package packaging

import (
	"bytes"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// ComposeFile is the part of the Compose specification this project uses.
// Decoding is strict: a misspelt key (depend_on, workdir, ...) is an error,
// not a silently ignored setting.
type ComposeFile struct {
	Name     string               `yaml:"name"`
	Services map[string]*Service  `yaml:"services"`
	Volumes  map[string]any       `yaml:"volumes"`
	Networks map[string]any       `yaml:"networks"`
	Ext      map[string]yaml.Node `yaml:",inline"` // only x-* keys allowed
}

// Service is one service entry.
type Service struct {
	Image         string     `yaml:"image"`
	Build         *BuildSpec `yaml:"build"`
	Command       Argv       `yaml:"command"`
	Entrypoint    Argv       `yaml:"entrypoint"`
	WorkingDir    string     `yaml:"working_dir"`
	Environment   KeyValues  `yaml:"environment"`
	Volumes       []string   `yaml:"volumes"`
	DependsOn     DependsOn  `yaml:"depends_on"`
	Healthcheck   any        `yaml:"healthcheck"`
	Ports         []string   `yaml:"ports"`
	Networks      any        `yaml:"networks"`
	Restart       string     `yaml:"restart"`
	User          string     `yaml:"user"`
	PullPolicy    string     `yaml:"pull_policy"`
	Profiles      []string   `yaml:"profiles"`
	Init          *bool      `yaml:"init"`
	Tmpfs         any        `yaml:"tmpfs"`
	Labels        any        `yaml:"labels"`
	ContainerName string     `yaml:"container_name"`
	StopGrace     string     `yaml:"stop_grace_period"`
}

// BuildSpec is a service's build section (the short `build: dir` form too).
type BuildSpec struct {
	Context    string    `yaml:"context"`
	Dockerfile string    `yaml:"dockerfile"`
	Target     string    `yaml:"target"`
	Args       KeyValues `yaml:"args"`
}

// UnmarshalYAML accepts `build: ./dir` as well as the mapping.
func (b *BuildSpec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode {
		b.Context = n.Value
		return nil
	}
	type plain BuildSpec
	return decodeStrict(n, (*plain)(b))
}

// Argv is a command: the list form, or a string split on whitespace as
// Compose does for the short form.
type Argv []string

// UnmarshalYAML accepts a string or a sequence of strings.
func (a *Argv) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*a = strings.Fields(n.Value)
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*a = list
	return nil
}

// KeyValues is an environment or args section, mapping or "K=V" list.
type KeyValues map[string]string

// UnmarshalYAML accepts both Compose forms.
func (kv *KeyValues) UnmarshalYAML(n *yaml.Node) error {
	out := map[string]string{}
	if n.Kind == yaml.SequenceNode {
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		for _, e := range list {
			k, v, _ := strings.Cut(e, "=")
			out[k] = v
		}
	} else if err := n.Decode(&out); err != nil {
		return err
	}
	*kv = out
	return nil
}

// DependsOn maps a service to the condition it waits for.
type DependsOn map[string]string

// UnmarshalYAML accepts the list form (condition service_started) and the
// mapping form.
func (d *DependsOn) UnmarshalYAML(n *yaml.Node) error {
	out := map[string]string{}
	if n.Kind == yaml.SequenceNode {
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		for _, s := range list {
			out[s] = "service_started"
		}
		*d = out
		return nil
	}
	var long map[string]struct {
		Condition string `yaml:"condition"`
		Restart   bool   `yaml:"restart"`
		Required  *bool  `yaml:"required"`
	}
	if err := decodeStrict(n, &long); err != nil {
		return err
	}
	for k, v := range long {
		if v.Condition == "" {
			v.Condition = "service_started"
		}
		out[k] = v.Condition
	}
	*d = out
	return nil
}

// decodeStrict decodes a node with unknown keys rejected (yaml.v3 applies
// KnownFields only through a Decoder, so the node is re-encoded).
func decodeStrict(n *yaml.Node, v any) error {
	for n.Kind == yaml.AliasNode {
		n = n.Alias // `build: *e2e-build` reaches here as the alias
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// ParseCompose decodes a compose file strictly.
func ParseCompose(text string) (*ComposeFile, error) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var cf ComposeFile
	if err := dec.Decode(&cf); err != nil {
		return nil, fmt.Errorf("%s: %w", ComposePath, err)
	}
	for k := range cf.Ext {
		if !strings.HasPrefix(k, "x-") {
			return nil, fmt.Errorf("%s: unknown top-level key %q", ComposePath, k)
		}
	}
	if len(cf.Services) == 0 {
		return nil, fmt.Errorf("%s: no services", ComposePath)
	}
	return &cf, nil
}

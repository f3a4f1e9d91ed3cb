package golden

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// stepTimeout bounds one request's wait for its response and one !wait.
const stepTimeout = 10 * time.Second

// refRe is "${ID.path}": a value from an earlier response's result.
var refRe = regexp.MustCompile(`\$\{([^.}]+)\.([^}]+)\}`)

// Vars are the ${NAME} placeholders a script may use in its env and
// client frames: PROJECT_ROOT always, plus the fakes the caller started
// (FAKELOKI_URL, RECEIVER_URL). The plugin's frames get the values
// turned back into the placeholders, so goldens do not hold ports or paths.
type Vars map[string]string

func (v Vars) expand(s []byte) []byte {
	for name, value := range v {
		s = bytes.ReplaceAll(s, []byte("${"+name+"}"), []byte(value))
	}
	return s
}

// Run spawns binary the way the daemon does (scrubbed environment plus
// env_required and the script's env, cwd = vars["PROJECT_ROOT"], a fresh
// project), plays the script's client steps and returns the plugin's
// frames, normalised, one per line, followed by how the process ended.
// The host is returned for its wire log and stderr; the caller closes it.
func Run(ctx context.Context, binary string, vars Vars, sc *Script, schemas *schemacheck.Set) ([]byte, *fakehost.Host, error) {
	root := vars["PROJECT_ROOT"]
	env := map[string]string{}
	for k, v := range sc.Env {
		env[k] = string(vars.expand([]byte(v)))
	}
	manifest, err := fakehost.Probe(ctx, binary, fakehost.ProbeOptions{Env: env})
	if err != nil {
		return nil, nil, fmt.Errorf("manifest probe: %w", err)
	}
	h, err := fakehost.Start(ctx, fakehost.Config{
		Binary: binary, Dir: root, EnvMode: fakehost.EnvDaemon, Env: env,
		Declared: nonNil(manifest.EnvNames()), Schemas: schemas,
	})
	if err != nil {
		return nil, nil, err
	}
	p := player{h: h, vars: vars, results: map[string]json.RawMessage{}, waited: map[string]int{}}
	var frames [][]byte
	mark := 0
	for _, st := range sc.Steps {
		if err := p.play(ctx, st); err != nil {
			return nil, h, fmt.Errorf("client line %d: %w", st.Line, err)
		}
		var got [][]byte
		got, mark = pluginFrames(h, mark)
		frames = append(frames, got...)
	}
	var out bytes.Buffer
	for _, f := range frames {
		out.Write(f)
		out.WriteByte('\n')
	}
	if exited, code := h.Exited(); exited {
		fmt.Fprintf(&out, "# exit %d\n", code)
	} else {
		out.WriteString("# still running after the last step (killed)\n")
	}
	return normalize(out.Bytes(), vars, manifest.Version, sc.Normalize), h, nil
}

// player runs steps against one process.
type player struct {
	h       *fakehost.Host
	vars    Vars
	results map[string]json.RawMessage // compact id → result
	waited  map[string]int             // notifications consumed by !wait, per method
}

func (p *player) play(ctx context.Context, st Step) error {
	switch st.Op {
	case "wait":
		return p.wait(ctx, st.Arg)
	case "sleep":
		d, _ := time.ParseDuration(st.Arg) // checked by Parse
		time.Sleep(d)
		return nil
	case "exit":
		if exited, _ := p.h.Wait(2 * time.Second); !exited {
			return fmt.Errorf("the plugin did not exit within 2 s")
		}
		return nil
	}
	frame, err := p.expand(st.Frame)
	if err != nil {
		return err
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if err := json.Unmarshal(frame, &head); err != nil {
		return fmt.Errorf("not a JSON frame: %v", err)
	}
	if err := p.h.Send(append(frame, '\n')); err != nil {
		return err
	}
	if head.ID == nil || head.Method == nil {
		return nil // a notification: nothing to wait for
	}
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	resp, err := p.h.Await(ctx, head.ID)
	if err != nil {
		return err
	}
	p.results[string(resp.ID)] = resp.Result
	return nil
}

// wait blocks until one more method notification than already consumed
// has arrived. WaitNotification offers each notification to match once,
// in order, so counting inside match finds the want-th.
func (p *player) wait(ctx context.Context, method string) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	want, seen := p.waited[method]+1, 0
	_, err := p.h.WaitNotification(ctx, func(n fakehost.Notification) bool {
		if n.Method == method {
			seen++
		}
		return seen >= want
	})
	if err != nil {
		return fmt.Errorf("!wait %s: notification %d: %w", method, want, err)
	}
	p.waited[method] = want
	return nil
}

// expand fills ${NAME} variables and ${ID.path} references.
func (p *player) expand(frame []byte) ([]byte, error) {
	frame = p.vars.expand(frame)
	var bad error
	frame = refRe.ReplaceAllFunc(frame, func(m []byte) []byte {
		sub := refRe.FindSubmatch(m)
		v, err := lookup(p.results, string(sub[1]), string(sub[2]))
		if err != nil && bad == nil {
			bad = err
		}
		return v
	})
	return frame, bad
}

// lookup walks a dotted path of object keys (and array indexes) in the
// result of response id.
func lookup(results map[string]json.RawMessage, id, path string) ([]byte, error) {
	raw, ok := results[id]
	if !ok {
		raw, ok = results[`"`+id+`"`]
	}
	if !ok {
		return nil, fmt.Errorf("${%s.%s}: no result for id %s yet", id, path, id)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v, ok = x[k]
		case []any:
			var i int
			_, err := fmt.Sscan(k, &i)
			ok = err == nil && i >= 0 && i < len(x)
			if ok {
				v = x[i]
			}
		default:
			ok = false
		}
		if !ok {
			return nil, fmt.Errorf("${%s.%s}: no %q in %s", id, path, k, raw)
		}
	}
	return json.Marshal(v)
}

// pluginFrames returns the frames the plugin sent since wire-log index
// from: responses first, then notifications, each in arrival order, so a
// step's golden does not depend on how a response and a notification it
// caused raced. Scripts pin notifications that may arrive later with !wait.
func pluginFrames(h *fakehost.Host, from int) ([][]byte, int) {
	lines, next := h.WireLines(from)
	var responses, notes [][]byte
	for _, l := range lines {
		_, frame, ok := strings.Cut(l, " << ")
		if !ok {
			continue
		}
		if isNotification(frame) {
			notes = append(notes, []byte(frame))
		} else {
			responses = append(responses, []byte(frame))
		}
	}
	return append(responses, notes...), next
}

// isNotification reports whether frame is a JSON object with a method.
func isNotification(frame string) bool {
	var env map[string]json.RawMessage
	if json.Unmarshal([]byte(frame), &env) != nil {
		return false
	}
	_, ok := env["method"]
	return ok
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

package golden

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// StepTimeout bounds one request's wait for its response and one !wait.
const StepTimeout = 10 * time.Second

// exitWait is how long !exit waits for the plugin to end.
const exitWait = 2 * time.Second

// Conn is one connection to a plugin as the player drives it: a spawned
// binary (e2e/fakehost) or pluginkit.Serve in process (InProcess).
type Conn interface {
	// Send writes one frame, newline included.
	Send(frame []byte) error
	// Await returns the result of the response to id (null for an error
	// response).
	Await(ctx context.Context, id json.RawMessage) (json.RawMessage, error)
	// WaitNotifications waits until n notifications of method have
	// arrived since the connection started.
	WaitNotifications(ctx context.Context, method string, n int) error
	// Frames returns the frames the plugin sent from index from on, in
	// arrival order, and the index to continue from.
	Frames(from int) ([][]byte, int)
	// Wait waits up to d for the plugin to end and returns its exit code.
	Wait(d time.Duration) (exited bool, code int)
}

// Vars are the ${NAME} placeholders a script may use in its env and
// client frames: PROJECT_ROOT always, plus whatever the runner provides
// (NOW, RECEIVER_URL, FAKELOKI_URL). The plugin's frames get the values
// turned back into the placeholders, so goldens do not hold ports or paths.
type Vars map[string]string

func (v Vars) expand(s []byte) []byte {
	for name, value := range v {
		s = bytes.ReplaceAll(s, []byte("${"+name+"}"), []byte(value))
	}
	return s
}

// ExpandedEnv is the script's environment overlay with its variables
// expanded.
func (sc *Script) ExpandedEnv(vars Vars) map[string]string {
	env := make(map[string]string, len(sc.Env))
	for k, v := range sc.Env {
		env[k] = string(vars.expand([]byte(v)))
	}
	return env
}

// Play runs the script's client steps on conn and returns the plugin's
// frames, normalised, one per line, followed by how the plugin ended.
// version is the plugin's build version, normalised to <VERSION>.
func Play(ctx context.Context, conn Conn, vars Vars, version string, sc *Script) ([]byte, error) {
	p := player{conn: conn, vars: vars, results: map[string]json.RawMessage{}, waited: map[string]int{}}
	var out bytes.Buffer
	mark := 0
	for _, st := range sc.Steps {
		if err := p.play(ctx, st); err != nil {
			return nil, fmt.Errorf("client line %d: %w", st.Line, err)
		}
		var frames [][]byte
		frames, mark = conn.Frames(mark)
		for _, f := range stepOrder(frames) {
			out.Write(f)
			out.WriteByte('\n')
		}
	}
	if exited, code := conn.Wait(0); exited {
		fmt.Fprintf(&out, "# exit %d\n", code)
	} else {
		out.WriteString("# still running after the last step (killed)\n")
	}
	return normalize(out.Bytes(), vars, version, sc.Normalize), nil
}

// player runs steps against one connection.
type player struct {
	conn    Conn
	vars    Vars
	results map[string]json.RawMessage // compact id → result
	waited  map[string]int             // notifications consumed by !wait, per method
}

// refRe is "${ID.path}": a value from an earlier response's result.
var refRe = regexp.MustCompile(`\$\{([^.}]+)\.([^}]+)\}`)

func (p *player) play(ctx context.Context, st Step) error {
	switch st.Op {
	case "wait":
		ctx, cancel := context.WithTimeout(ctx, StepTimeout)
		defer cancel()
		want := p.waited[st.Arg] + 1
		if err := p.conn.WaitNotifications(ctx, st.Arg, want); err != nil {
			return fmt.Errorf("!wait %s: notification %d: %w", st.Arg, want, err)
		}
		p.waited[st.Arg] = want
		return nil
	case "sleep":
		d, _ := time.ParseDuration(st.Arg) // checked by Parse
		time.Sleep(d)
		return nil
	case "exit":
		if exited, _ := p.conn.Wait(exitWait); !exited {
			return fmt.Errorf("the plugin did not exit within %v", exitWait)
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
	if err := p.conn.Send(append(frame, '\n')); err != nil {
		return err
	}
	if head.ID == nil || head.Method == nil {
		return nil // a notification: nothing to wait for
	}
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	result, err := p.conn.Await(ctx, head.ID)
	if err != nil {
		return err
	}
	var id bytes.Buffer
	if err := json.Compact(&id, head.ID); err != nil {
		return err
	}
	p.results[id.String()] = result
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

// stepOrder puts a step's responses first, then its notifications, each
// in arrival order, so a golden does not depend on how a response and a
// notification it caused raced. Scripts pin notifications that may arrive
// later with !wait.
func stepOrder(frames [][]byte) [][]byte {
	var responses, notes [][]byte
	for _, f := range frames {
		if isNotification(f) {
			notes = append(notes, f)
		} else {
			responses = append(responses, f)
		}
	}
	return append(responses, notes...)
}

// isNotification reports whether frame is a JSON object with a method.
func isNotification(frame []byte) bool {
	var env map[string]json.RawMessage
	if json.Unmarshal(frame, &env) != nil {
		return false
	}
	_, ok := env["method"]
	return ok
}

// LineDiff is a minimal line diff: the lines each side has that the other
// lacks at the same position, enough to point at the changed frame.
func LineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

package model

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// A subject using none of the v0.1.1 fields must encode exactly as a
// v0.1.0 backend writes it (spec §9.3): same keys, same order, nothing
// extra, no nulls.
func TestDefaultSubjectIsV010ByteForByte(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := &Subject{ID: "task:01J", Kind: "task", Title: "t", Status: Ready, CreatedAt: Time{at}, UpdatedAt: Time{at}}
	got, err := rustjson.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"task:01J","kind":"task","title":"t","status":"ready","created_at":"2026-05-01T12:00:00Z","updated_at":"2026-05-01T12:00:00Z"}`
	if string(got) != want {
		t.Fatalf("default subject:\n got %s\nwant %s", got, want)
	}

	d, p, a := "body <b>&", 3, "alice"
	s.Description, s.Priority, s.Assignee, s.Labels = &d, &p, &a, []string{"x"}
	s.Custom = map[string]json.RawMessage{"z": json.RawMessage(`1`), "a": json.RawMessage(`"v"`)}
	got, _ = rustjson.Marshal(s)
	want = `{"id":"task:01J","kind":"task","title":"t","description":"body <b>&","status":"ready","priority":3,"assignee":"alice","labels":["x"],"created_at":"2026-05-01T12:00:00Z","updated_at":"2026-05-01T12:00:00Z","custom":{"a":"v","z":1}}`
	if string(got) != want {
		t.Fatalf("v0.1.0 fields:\n got %s\nwant %s", got, want)
	}

	// status_metadata is omitted only at JSON null: {} is emitted.
	s.StatusMetadata = json.RawMessage(`{}`)
	native := "In Review"
	s.NativeStatus = &native
	got, _ = rustjson.Marshal(s)
	if want := `"native_status":"In Review","status_metadata":{}}`; string(got[len(got)-len(want):]) != want {
		t.Fatalf("v0.1.1 fields: %s", got)
	}
}

func TestEventOmitsNullPrevious(t *testing.T) {
	at := Time{time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	ev := Event{ID: "task:1", ChangeKind: Created, Subject: &Subject{ID: "task:1", Kind: "task", Title: "t", Status: Ready, CreatedAt: at, UpdatedAt: at}}
	got, _ := rustjson.Marshal(ev)
	want := `{"id":"task:1","change_kind":"created","subject":{"id":"task:1","kind":"task","title":"t","status":"ready","created_at":"2026-05-01T12:00:00Z","updated_at":"2026-05-01T12:00:00Z"}}`
	if string(got) != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

package victorialogs

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// stub answers like VictoriaLogs: rows out of order, tenant from headers.
func stub(t *testing.T, metrics string) *Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/select/logsql/query", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("AccountID") != "7" || r.Header.Get("ProjectID") != "3" {
			return // another tenant: no rows
		}
		if r.FormValue("query") != "*" || r.FormValue("start") == "" || r.FormValue("end") == "" {
			http.Error(w, "bad query args", http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, `{"_msg":"b","_time":"2026-05-17T18:00:00.1Z"}`)
		fmt.Fprintln(w, `{"_msg":"c","_time":"2026-05-17T18:00:00.123456789Z"}`)
		fmt.Fprintln(w, `{"_msg":"a","_time":"2026-05-17T18:00:00Z"}`)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, metrics) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &Server{URL: srv.URL, client: srv.Client()}
}

// TestQueryOrdersByTimeAndScopesTenant: rows come back ordered by the
// instant of _time (not its string, where trimmed zeros mislead), and
// only for the tenant's headers.
func TestQueryOrdersByTimeAndScopesTenant(t *testing.T) {
	s := stub(t, "")
	ctx := context.Background()
	now := time.Now()
	rows, err := s.Query(ctx, Tenant{AccountID: 7, ProjectID: 3}, "*", now.Add(-time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r["_msg"])
	}
	if strings.Join(got, "") != "abc" {
		t.Errorf("order %v, want a b c", got)
	}
	rows, err = s.Query(ctx, Tenant{AccountID: 8}, "*", now.Add(-time.Hour), now)
	if err != nil || len(rows) != 0 {
		t.Errorf("other tenant: %d rows, %v", len(rows), err)
	}
}

func TestPushCounts(t *testing.T) {
	for _, c := range []struct {
		name, page string
		want       PushCounts
		wantErr    bool
	}{
		{"both", "vl_x 1\n" +
			`vl_http_requests_total{path="/insert/loki/api/v1/push",format="json"} 12` + "\n" +
			`vl_http_requests_total{path="/insert/jsonline",format="json"} 99` + "\n" +
			`vl_http_requests_total{path="/insert/loki/api/v1/push",format="protobuf"} 5` + "\n",
			PushCounts{JSON: 12, Protobuf: 5}, false},
		{"missing protobuf", `vl_http_requests_total{path="/insert/loki/api/v1/push",format="json"} 12` + "\n", PushCounts{}, true},
		{"not a number", `vl_http_requests_total{path="/insert/loki/api/v1/push",format="json"} x` + "\n" +
			`vl_http_requests_total{path="/insert/loki/api/v1/push",format="protobuf"} 5` + "\n", PushCounts{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := stub(t, c.page).PushCounts(context.Background())
			if (err != nil) != c.wantErr || (!c.wantErr && got != c.want) {
				t.Errorf("got %+v, %v; want %+v, error %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

// TestPushCountsWaitsOutTheCache: a second read within VictoriaLogs'
// one-second /metrics cache waits until the page is regenerated.
func TestPushCountsWaitsOutTheCache(t *testing.T) {
	s := stub(t, `vl_http_requests_total{path="/insert/loki/api/v1/push",format="json"} 1`+"\n"+
		`vl_http_requests_total{path="/insert/loki/api/v1/push",format="protobuf"} 1`+"\n")
	ctx := context.Background()
	if _, err := s.PushCounts(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := s.PushCounts(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < metricsCacheAge {
		t.Errorf("second read after %v, want ≥ %v", d, metricsCacheAge)
	}
}

func TestNewTenantAvoidsDefault(t *testing.T) {
	seen := map[Tenant]bool{}
	for range 100 {
		tn := NewTenant()
		if tn.AccountID == 0 {
			t.Fatal("AccountID 0 is VictoriaLogs' default tenant")
		}
		seen[tn] = true
	}
	if len(seen) < 99 {
		t.Errorf("%d distinct tenants in 100 draws", len(seen))
	}
	if got := (Tenant{AccountID: 42, ProjectID: 7}).OrgID(); got != "42:7" {
		t.Errorf("OrgID %q", got)
	}
}

// Command bareecho is the benchmark baseline: the least a JSON-RPC child
// can do per request without pluginkit. It reads one line, decodes the
// envelope, and writes {"jsonrpc":"2.0","id":<id>,"result":<params>}.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		result := req.Params
		if result == nil {
			result = json.RawMessage("{}")
		}
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(req.ID)
		out.WriteString(`,"result":`)
		out.Write(result)
		out.WriteString("}\n")
		out.Flush()
	}
}

package chatserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	return conn
}

func join(t *testing.T, url string, group, user int) *websocket.Conn {
	t.Helper()
	conn := dial(t, url)
	if err := conn.WriteMessage(websocket.TextMessage,
		fmt.Appendf(nil, `{"join": {"group": %d, "user": %d, "history": 2}}`, group, user)); err != nil {
		t.Fatal(err)
	}
	_, answer, err := conn.ReadMessage()
	if err != nil || string(answer) != fmt.Sprintf(`{"joined":%d}`, user) {
		t.Fatalf("join of user %d answered %q, %v", user, answer, err)
	}
	return conn
}

func TestAMessageReachesTheOtherMemberVerbatimWithItsOpcode(t *testing.T) {
	srv := httptest.NewServer(New())
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/any/path"
	a, b := join(t, url, 0, 1), join(t, url, 0, 2)
	other := join(t, url, 1, 3) // another group: must get nothing
	for _, m := range []struct {
		opcode  int
		payload string
	}{{websocket.TextMessage, `{"g":0,"u":1,"t":5,"m":"hi"}`}, {websocket.BinaryMessage, "\x00\x01binary"}} {
		if err := a.WriteMessage(m.opcode, []byte(m.payload)); err != nil {
			t.Fatal(err)
		}
		opcode, got, err := b.ReadMessage()
		if err != nil || opcode != m.opcode || string(got) != m.payload {
			t.Fatalf("b got opcode %d %q (%v), want %d %q", opcode, got, err, m.opcode, m.payload)
		}
	}
	_ = other.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, got, err := other.ReadMessage(); err == nil {
		t.Fatalf("a user of another group got %q", got)
	}
}

func TestStatsAnswerEveryQueryWithTheServersOwnView(t *testing.T) {
	s := New()
	srv := httptest.NewServer(s)
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	join(t, url, 0, 1)
	control := dial(t, url)
	for range 2 {
		if err := control.WriteMessage(websocket.TextMessage, []byte(`{"stats": true}`)); err != nil {
			t.Fatal(err)
		}
		_, body, err := control.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var st Stats
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if st.Connections != 1 || st.RSSBytes <= 0 || st.PeakRSSBytes < st.RSSBytes || st.CPUNs <= 0 ||
			st.Processes < 2 || st.Runtime["total_bytes"] <= 0 || st.Runtime["goroutines_count"] <= 0 {
			t.Fatalf("stats %s", body)
		}
	}
}

func TestListenSaysItsPortAndStopsWhenStdinCloses(t *testing.T) {
	stdinR, stdinW := io.Pipe()
	out := &strings.Builder{}
	done := make(chan error, 1)
	go func() { done <- Listen("127.0.0.1:0", stdinR, out) }()
	time.Sleep(50 * time.Millisecond)
	stdinW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Listen went on after its stdin closed")
	}
	var said struct{ Listening int }
	if err := json.Unmarshal([]byte(out.String()), &said); err != nil || said.Listening <= 0 {
		t.Fatalf("stdout %q", out.String())
	}
}

// The worker's --chat-server mode takes exactly `--listen HOST:PORT`; anything
// else is refused naming what it got, before listening anywhere.
func TestMainWantsListenHostPort(t *testing.T) {
	for _, args := range [][]string{nil, {"--listen"}, {"--port", "1"}, {"--listen", "x", "y"}} {
		err := Main(args)
		if err == nil || !strings.Contains(err.Error(), "want --listen HOST:PORT, got") {
			t.Errorf("Main(%q) = %v", args, err)
		}
	}
}

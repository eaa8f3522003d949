package agent

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestCheckEntries(t *testing.T) {
	good := []LogEntry{
		{Seq: 1, Kind: KindEvent, Payload: json.RawMessage(`{"type":"task.started","task_id":"t","seq":1}`)},
		{Seq: 2, Kind: KindMessage, Payload: json.RawMessage(`{"role":"user","content":"go"}`)},
		{Seq: 3, Kind: KindStore, Payload: json.RawMessage(`{"key":"k","value":1}`)},
	}
	if err := checkEntries(good); err != nil {
		t.Fatal(err)
	}
	for i := range good {
		entries := append([]LogEntry(nil), good...)
		entries[i].Payload = json.RawMessage(`{"key":`)
		var ce *CorruptEntryError
		if err := checkEntries(entries); !errors.As(err, &ce) || ce.Seq != good[i].Seq || ce.Kind != good[i].Kind {
			t.Errorf("entry %d (%s) corrupt: %v", good[i].Seq, good[i].Kind, err)
		}
	}
}

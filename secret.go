package skilld

import "time"

// Secret is a named value a workspace keeps for the skills that declare
// it (skilld.yaml "secrets"). The value never leaves the server through
// the API: reads list names and update times.
type Secret struct {
	Name      string    `json:"name"`
	UpdatedBy string    `json:"updated_by,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

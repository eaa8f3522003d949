package skilld

// Role is what a member or token may do inside its workspace. Roles are
// ordered: an admin can do everything a member can, a member everything a
// viewer can.
type Role string

const (
	RoleViewer Role = "viewer" // reads
	RoleMember Role = "member" // creates and edits skills and agents, runs tasks
	RoleAdmin  Role = "admin"  // manages tokens, policy and catalog pin updates
)

func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleMember:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// Allows reports whether r includes everything need grants.
func (r Role) Allows(need Role) bool { return r.Valid() && r.rank() >= need.rank() }

package executor

import (
	"context"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/skilltools"
)

// toolsets builds the extra tools the task's agent asks for. A toolset
// that cannot be built fails the task's start, saying why: a run that
// silently lacks tools its agent was configured with would look like a
// model that ignores its instructions.
func (l *Local) toolsets(ctx context.Context, t *skilld.Task, snap *service.Snapshot) ([]*tool.Tool, error) {
	var tools []*tool.Tool
	for _, ts := range snap.Toolsets {
		switch ts {
		case skilld.ToolsetSkills:
			actor, err := l.cfg.Service.TaskActor(ctx, t, snap)
			if err != nil {
				return nil, fmt.Errorf("the skills toolset: %w", err)
			}
			st, err := skilltools.New(l.cfg.Service, actor)
			if err != nil {
				return nil, fmt.Errorf("the skills toolset: %w", err)
			}
			tools = append(tools, st...)
		default:
			return nil, skilld.Errorf(skilld.EINVALID, "agent %q asks for the toolset %q, which this server does not have", snap.AgentName, ts)
		}
	}
	return tools, nil
}

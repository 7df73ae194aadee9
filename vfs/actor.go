package vfs

import "context"

// OwnerActor is the actor name of calls made by the store's owner: the unix
// socket, the owner token, and in-process callers that name no actor.
const OwnerActor = "owner"

// Actor is who makes a change. Mutations read it from their context: history
// records its name, and the agent-modification guard refuses an agent's
// change to a protected item in the same transaction as the change.
type Actor struct {
	Name  string // token name, or OwnerActor
	Agent bool   // the caller is an agent: protected context files are read-only to it
	// Op, when set, replaces the operation history records (for example
	// "context_update" or "refresh" for a write made on their behalf).
	Op string
}

type actorKey struct{}

// WithActor returns ctx carrying a as the actor of the mutations made with it.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries, or the owner when it carries none.
func ActorFrom(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	if a.Name == "" {
		a.Name = OwnerActor
	}
	return a
}

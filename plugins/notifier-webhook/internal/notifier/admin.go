package notifier

import (
	"context"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
)

func errUnavailable(err error) error {
	return pluginkit.Unavailable("the notifier outbox is not answering").Wrap(err)
}

// DeadLetters handles notifier/dead_letters: the newest dead letters and
// their total.
func (s *Service) DeadLetters(ctx context.Context, p DeadLettersParams) (DeadLettersResult, error) {
	st, err := s.outbox()
	if err != nil {
		return DeadLettersResult{}, err
	}
	rows, total, err := st.ListDead(ctx, p.ProjectRoot, p.Limit)
	if err != nil {
		return DeadLettersResult{}, errUnavailable(err)
	}
	out := DeadLettersResult{DeadLetters: make([]DeadLetter, 0, len(rows)), Total: total}
	for _, d := range rows {
		out.DeadLetters = append(out.DeadLetters, DeadLetterOf(d))
	}
	return out, nil
}

// DeadLetterOf is the operator's view of a dead-lettered row.
func DeadLetterOf(d *store.Delivery) DeadLetter {
	return DeadLetter{
		DeliveryID: d.DeliveryID, EventID: d.EventID, EventType: d.EventType, ProjectRoot: d.ProjectRoot,
		ConnectorID: d.ConnectorID, SubscriptionID: d.SubscriptionID, Attempts: d.Attempts,
		FailedAt: d.DeadAt.UTC().Format(time.RFC3339), LastError: d.LastError, LastStatusCode: d.LastStatusCode,
	}
}

// ReplayDeadLetters handles notifier/replay_dead_letters: the chosen dead
// letters become pending again with a fresh attempt budget and go out on
// the next flush, with their original delivery_id.
func (s *Service) ReplayDeadLetters(ctx context.Context, p ReplayParams) (ReplayResult, error) {
	st, err := s.outbox()
	if err != nil {
		return ReplayResult{}, err
	}
	replayed, notFound, err := st.Replay(ctx, p.ProjectRoot, p.DeliveryIDs, p.All)
	if err != nil {
		return ReplayResult{}, errUnavailable(err)
	}
	if replayed == nil {
		replayed = []string{}
	}
	if notFound == nil {
		notFound = []string{}
	}
	return ReplayResult{Replayed: len(replayed), DeliveryIDs: replayed, NotFound: notFound}, nil
}

// Package mapping turns one Slack Events API event_callback into the flat
// trigger event the Animus daemon decodes, or says why it is dropped.
//
// It works on the raw JSON, not on slack-go's typed structs: the typed
// app_mention event has no team, typed parsing fails on inner event types
// slack-go does not know, and the workflow must see the inner event as Slack
// sent it ({{trigger.payload.text}}, .user, .channel, .ts, .thread_ts).
//
// It is pure (no I/O, no clock) so every rule is a table test: which events
// become slack.mention or slack.dm, how event_id is built, which messages are
// the bot's own or other bots', which channels are allowed, and that the
// payload carries no null and no reserved __animus_ key.
package mapping

package pluginkit

import "sync"

// workQueue runs request and notification handlers on up to max workers.
// The reader never blocks on it, so $/ping, $/cancelRequest and shutdown
// are read and answered while every worker is busy. With one worker, jobs
// run strictly in arrival order (Plugin.Serial).
//
// Workers start on demand: a job that finds no idle worker starts one,
// up to max. The daemon runs a process per call, and starting all 32
// goroutines before the first frame (and waking them all again at exit)
// was a measurable part of its cold start; a per-call process now starts
// one.
type workQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    []func()
	closed  bool
	max     int // workers allowed
	workers int // workers started and not returned
	idle    int // workers waiting for a job
}

func newWorkQueue(workers int) *workQueue {
	q := &workQueue{max: max(workers, 1)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push queues a job. It reports false once the queue is closed.
func (q *workQueue) push(job func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.jobs = append(q.jobs, job)
	// An idle worker that was signalled stays counted idle until it runs,
	// so more queued jobs than idle workers means this one has nobody.
	if len(q.jobs) > q.idle && q.workers < q.max {
		q.workers++
		go q.work()
		return true
	}
	q.cond.Signal()
	return true
}

// close stops the workers once the queued jobs have run.
func (q *workQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *workQueue) work() {
	for {
		q.mu.Lock()
		for len(q.jobs) == 0 && !q.closed {
			q.idle++
			q.cond.Wait()
			q.idle--
		}
		if len(q.jobs) == 0 {
			q.workers--
			q.mu.Unlock()
			return
		}
		job := q.jobs[0]
		q.jobs[0] = nil
		q.jobs = q.jobs[1:]
		q.mu.Unlock()
		job()
	}
}

package pluginkit

import "sync"

// workQueue runs request and notification handlers on a fixed set of
// workers. The reader never blocks on it, so $/ping, $/cancelRequest and
// shutdown are read and answered while every worker is busy. With one
// worker, jobs run strictly in arrival order (Plugin.Serial).
type workQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	jobs   []func()
	closed bool
}

func newWorkQueue(workers int) *workQueue {
	q := &workQueue{}
	q.cond = sync.NewCond(&q.mu)
	for range workers {
		go q.work()
	}
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
			q.cond.Wait()
		}
		if len(q.jobs) == 0 {
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

'use strict';
// An actor on the one event loop: a mailbox drained later, never inside the call that
// posts to it, so every hop is a message as in the seed's processes. schedule says when:
// setImmediate (the default: a later turn of the loop, so timers and I/O run between
// hops, as chat's clients need) or queueMicrotask (as soon as the current code yields,
// as an awaited promise resumes: the ring's token, with nothing else to wait for).

class Actor {
  constructor(schedule = setImmediate) {
    this.mailbox = [];
    this.scheduled = false;
    this.schedule = schedule;
  }

  post(message) {
    this.mailbox.push(message);
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.drain());
    }
  }

  drain() {
    this.scheduled = false;
    const messages = this.mailbox;
    this.mailbox = [];
    for (const message of messages) this.receive(message);
  }

  receive() {
    throw new Error(`${this.constructor.name} does not receive messages`);
  }
}

module.exports = { Actor };

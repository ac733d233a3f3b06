'use strict';
// An actor on the one event loop: a mailbox drained on a later turn (setImmediate), so
// every hop between users, groups and clients is a message as in the seed's processes,
// and no chain of hops runs to completion inside one call.

class Actor {
  constructor() {
    this.mailbox = [];
    this.scheduled = false;
  }

  post(message) {
    this.mailbox.push(message);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
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

'use strict';
// The variant's options (target.toml's options table, sent in every request): typed
// readers, and a check that refuses a key the worker does not know, since a silently
// ignored option would measure something else.

const { internal } = require('./protocol');

class Options {
  constructor(raw = {}) {
    this.raw = raw;
  }

  bool(name, fallback = false) {
    if (!Object.hasOwn(this.raw, name)) return fallback;
    const value = this.raw[name];
    if (typeof value !== 'boolean') throw internal(`option ${name} = ${JSON.stringify(value)}: expected true or false`);
    return value;
  }

  int(name, fallback) {
    if (!Object.hasOwn(this.raw, name)) return fallback;
    const value = this.raw[name];
    if (!Number.isInteger(value)) throw internal(`option ${name} = ${JSON.stringify(value)}: expected an integer`);
    return value;
  }

  oneOf(name, accepted, fallback) {
    if (!Object.hasOwn(this.raw, name)) return fallback;
    const value = this.raw[name];
    if (!accepted.includes(value)) {
      throw internal(`option ${name} = ${JSON.stringify(value)}: expected one of ${accepted.join(', ')}`);
    }
    return value;
  }

  // unknown throws naming every key not in known.
  unknown(...known) {
    const unknown = Object.keys(this.raw).filter((name) => !known.includes(name)).sort();
    if (unknown.length > 0) {
      throw internal(`unknown option ${unknown.join(', ')} (known here: ${known.join(', ') || 'none'})`);
    }
  }
}

module.exports = { Options };

// One WebSocket per open session (/ws/sessions/{id}, the token as ?token=: browsers cannot
// set a socket's headers). It reconnects with a growing delay and says when it did, so the
// page can reload what it missed meanwhile.

import { token } from "./api.js";

const MAX_DELAY_MS = 10000;
const NO_SESSION = 4404; // the gateway's close code for an unknown session: retrying cannot help

export class SessionSocket {
  /**
   * @param {string} sessionId
   * @param {{onEvent: (e: object) => void, onState: (open: boolean) => void,
   *          onReconnect: () => void}} handlers
   */
  constructor(sessionId, handlers) {
    this.sessionId = sessionId;
    this.handlers = handlers;
    this.ws = null;
    this.closed = false;
    this.delay = 500;
    this.everOpened = false;
    this.connect();
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const query = token() ? `?token=${encodeURIComponent(token())}` : "";
    return `${scheme}://${location.host}/ws/sessions/${encodeURIComponent(this.sessionId)}${query}`;
  }

  connect() {
    if (this.closed) return;
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onopen = () => {
      this.delay = 500;
      this.handlers.onState(true);
      if (this.everOpened) this.handlers.onReconnect();
      this.everOpened = true;
    };
    ws.onmessage = (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return; // not ours: every server frame is one JSON object
      }
      this.handlers.onEvent(event);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.handlers.onState(false);
      if (this.closed || event.code === NO_SESSION) return;
      setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, MAX_DELAY_MS);
    };
  }

  get open() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends `payload` when the socket is open; false tells the caller to use REST instead. */
  send(payload) {
    if (!this.open) return false;
    this.ws.send(JSON.stringify(payload));
    return true;
  }

  close() {
    this.closed = true;
    if (this.ws) this.ws.close();
    this.ws = null;
  }
}

// fetch against the gateway's /api with the bearer token. A 401 asks the user for the token
// (the token dialog), keeps it in localStorage and retries once.

const TOKEN_KEY = "compaction.token";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function token() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

let asking = null;

/** The token dialog; one prompt at a time however many calls were refused. */
export function askToken() {
  if (asking) return asking;
  const dialog = document.getElementById("token-dialog");
  const input = document.getElementById("token-input");
  input.value = token();
  asking = new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        asking = null;
        const value = input.value.trim();
        if (dialog.returnValue === "ok" && value) {
          localStorage.setItem(TOKEN_KEY, value);
          resolve(true);
        } else {
          resolve(false);
        }
      },
      { once: true },
    );
  });
  dialog.showModal();
  input.focus();
  return asking;
}

async function send(method, path, body) {
  const headers = {};
  const current = token();
  if (current) headers.Authorization = `Bearer ${current}`;
  let payload;
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  return fetch(path, { method, headers, body: payload });
}

async function failure(response) {
  let code = `http_${response.status}`;
  let message = response.statusText || code;
  try {
    const data = await response.json();
    const error = data.error || {};
    if (typeof data.detail === "string") message = data.detail;
    else if (Array.isArray(data.detail)) message = data.detail.map((d) => d.msg).join("; ");
    code = error.code || code;
    message = error.message || message;
  } catch {
    // not JSON: the status line says enough
  }
  return new ApiError(response.status, code, message);
}

/** `method path` with an optional JSON body; resolves to the parsed JSON answer (or null). */
export async function api(path, { method = "GET", body } = {}) {
  let response = await send(method, path, body);
  if (response.status === 401 && (await askToken())) {
    response = await send(method, path, body);
  }
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

export const sessionPath = (id) => `/api/sessions/${encodeURIComponent(id)}`;

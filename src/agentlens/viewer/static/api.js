// The JSON API: one GET per call; an error answer becomes an Error with the server's message.

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export async function get(path, query = {}) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") params.set(k, v);
  const qs = params.toString();
  const response = await fetch(`/api/${path}${qs ? `?${qs}` : ""}`, { headers: { Accept: "application/json" } });
  let body = null;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`${response.status} ${response.statusText}: not JSON`, response.status);
  }
  if (!response.ok) throw new ApiError(body && body.error ? body.error : `HTTP ${response.status}`, response.status);
  return body;
}

export const enc = encodeURIComponent;

/**
 * How the frames of one page find each other: through their common parent's `frames`, keeping only those that
 * are on our own origin (a same-origin sibling's location is readable; any other throws). A message between them
 * is posted with our origin as targetOrigin, and accepted only from a same-origin window whose parent is ours:
 * another page's frames, in another tab or window, never share our parent, so two shops' cards never mix.
 */
const OWN_ORIGIN = window.location.origin;

/** Our origin's frames beside this one under the same parent, with their path. */
export function siblings(): { window: Window; path: string }[] {
  const found: { window: Window; path: string }[] = [];
  const parent = window.parent;
  if (parent === window) return found;
  for (let i = 0; i < parent.frames.length; i++) {
    const frame = parent.frames[i];
    if (!frame || frame === window) continue;
    try {
      if (frame.location.origin === OWN_ORIGIN) found.push({ window: frame, path: frame.location.pathname });
    } catch {
      // another origin's frame (or the initial about:blank of one still loading): not ours
    }
  }
  return found;
}

/** Whether a message came from a frame of our origin under our own parent. */
export function fromSibling(event: MessageEvent): event is MessageEvent & { source: Window } {
  if (event.origin !== OWN_ORIGIN || event.source === null || event.source === window) return false;
  try {
    return (event.source as Window).parent === window.parent && window.parent !== window;
  } catch {
    return false;
  }
}

export function postToSibling(target: Window, message: unknown): void {
  target.postMessage(message, OWN_ORIGIN);
}

/** Whether a message came from the page that embeds us, on the origin it was given. */
export function fromParent(event: MessageEvent, parentOrigin: string): boolean {
  return event.origin === parentOrigin && event.source === window.parent && window.parent !== window;
}

export function postToParent(parentOrigin: string, message: unknown): void {
  if (window.parent !== window) window.parent.postMessage(message, parentOrigin);
}

export const CONTROLLER_PATH = /\/controller(\.html)?$/;

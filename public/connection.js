// The banner that says the service cannot be reached: shown while the event
// stream is down or a request found no service, gone once both are back.
import { onReachability } from './api.js';

const banner = document.getElementById('connection');
const state = { streamDown: false, unreachable: false };

function show() {
  banner.hidden = !(state.streamDown || state.unreachable);
}

/** A failure that says nothing about your request, only that the service is out of reach. */
export function isConnectionProblem(error) {
  return error instanceof TypeError || [502, 503, 504].includes(error?.status);
}

/** The event stream is open (true) or lost (false). */
export function streamUp(up) {
  state.streamDown = !up;
  // An open stream means the service answers again.
  if (up) state.unreachable = false;
  show();
}

/** A request reached the service (true) or found nothing there (false). */
export function reached(yes) {
  state.unreachable = !yes;
  show();
}

onReachability(reached);

// Watch a chat: for a model with a chat template (web/demo-pretrained.js applies it and streams the
// reply), the reply's tokens as buttons; the one picked (click, or Tab/arrow keys and Enter) shows
// which earlier tokens it attended to — one layer's heads (or their mean), the mean over every
// layer and head, or the attention rollout through every layer (the library's attentionRollout) —
// in an <attention-heatmap> of its one row, and the logit lens column of the step that wrote it
// (web/demo-tables.js). A view of the store: the conversation, the reply, the token and the view
// are in the state, so in the chat's link; a model opened from this device is not (the link says
// so), and opening the same model again brings the conversation back. Token text: textContent only.
import { attn } from './widgets.js';
import { chatRow } from './demo-chat-row.js';
import { searchFromState } from './demo-state.js';
import { page, setState } from './demo-store.js';
import { $ } from './demo-dom.js';
import { markLensStep, visible } from './demo-tables.js';
import { showSelection } from './demo-trained.js';

const AGG = {
  layer: (l, view) =>
    `layer ${l}, ${view === 'all' ? 'each head' : view === 'mean' ? 'mean over heads' : `head ${view}`}`,
  layers: () => 'mean over every layer and head',
  rollout: () => 'attention rollout through every layer',
};

/** The chat's messages as the state holds them (the system message only when there is one). */
export const chatMessages = (state) => [
  ...(state.chatSystem ? [{ role: 'system', content: state.chatSystem }] : []),
  { role: 'user', content: state.chatUser },
];

let streamed = null; // the reply's text so far while it streams (null: no stream since the last reply shown)

/** The reply as it streams, one chip per token as the model writes it (before the page reads it again). */
export function streamReply(token, count) {
  const box = $('chat-reply');
  if (count === 1) {
    box.replaceChildren();
    box.dataset.sig = '';
    streamed = '';
    $('chat-map').hidden = true; // the last reply's map, until this one is in
  }
  const chip = document.createElement('span');
  chip.className = 'chip';
  chip.textContent = visible(
    streamed && token.text.startsWith(streamed) ? token.text.slice(streamed.length) : token.text,
  );
  streamed = token.text;
  box.append(chip);
  $('chat-watch-view').hidden = false;
  $('chat-watch-note').textContent = `The reply, streamed: ${count} of up to ${token.of} tokens…`;
}

/** Where the reply starts in the input, or -1 when the input is not the chat's prompt and reply. */
function replyStart(source, state, T) {
  const prompt = source.chatPrompt;
  if (!prompt || !state.chatReply || state.text !== prompt.text + state.chatReply) return -1;
  return prompt.length < T ? prompt.length : -1;
}

/** The reply's tokens as buttons (one pressed: the token shown); arrow keys move the choice. */
function replyButtons(tokens, start, picked) {
  const box = $('chat-reply');
  const sig = `${start}|${tokens.join('\u0000')}`;
  if (box.dataset.sig !== sig) {
    box.dataset.sig = sig;
    box.replaceChildren(
      ...tokens.slice(start).map((t, k) => {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'chip reply-token';
        b.textContent = t;
        b.dataset.k = String(k);
        b.setAttribute('aria-label', `reply token ${k}: ${t}`);
        return b;
      }),
    );
  }
  for (const b of box.children) b.setAttribute('aria-pressed', String(Number(b.dataset.k) === picked));
}

/** The chat's link: the state with its conversation, token and view, and the model where it has a name. */
function chatLink(source, state) {
  const chatModel = source.hubName ?? '';
  $('chat-link').href = `${location.pathname}${searchFromState({ ...state, chatModel })}`;
  $('chat-link-note').textContent = chatModel
    ? `It names ${chatModel} on the Hugging Face Hub: whoever opens it is asked before anything is downloaded.`
    : 'A model opened from this device (a folder or a file) cannot travel in a link: the link holds the ' +
      'conversation, the token and the view, and whoever opens it opens the same model to see them.';
}

let offered = ''; // the Hub model a link's chat named, last offered in the Hub panel

/**
 * After every change of the store: a link's chat that names a Hub model fills the Hub panel with it
 * and opens the panel, saying so — nothing is fetched until the reader asks (Check size).
 */
export function followChatModel() {
  const name = page.state.chatModel;
  if (!name || name === offered || page.source?.hubName === name) return;
  offered = name;
  const [repo, file = ''] = name.split(':');
  $('hub-repo').value = repo;
  $('hub-file').value = file;
  $('hub-panel').open = true;
  const note = $('hub-link-note');
  note.hidden = false;
  note.textContent = `This link's chat was with ${repo}${file ? ` (${file})` : ''}: Check size, then Download and open, and the conversation comes back.`;
}

/**
 * After a render of a chat model (renderModel's r on ids and their tokens): the reply's tokens, the
 * picked one's attention row and the lens column of its step; hidden when the input is no chat.
 */
export function showChat({ source, state, r, tokens }) {
  const T = tokens.length;
  const view = $('chat-watch-view');
  const start = replyStart(source, state, T);
  if (source.views.chat && start < 0 && state.chatReply && !source.chatPrompt) restoreChat(source);
  // While the reply streams the input is still the prompt: the streamed chips stay.
  if (start < 0 && streamed !== null && state.text === source.chatPrompt?.text) return undefined;
  streamed = null;
  view.hidden = start < 0;
  const map = $('chat-map');
  if (start < 0) return markLensStep($, -1);
  const picked = state.chatToken >= 0 && start + state.chatToken < T ? state.chatToken : -1;
  replyButtons(tokens, start, picked);
  chatLink(source, state);
  $('chat-agg').value = state.chatAgg;
  const layers = $('chat-layer');
  if (layers.childElementCount !== r.attention.length)
    layers.replaceChildren(...r.attention.map((_, l) => new Option(`Layer ${l}`, String(l))));
  layers.value = String(Math.min(state.layer, r.attention.length - 1));
  layers.disabled = state.chatAgg !== 'layer';
  map.hidden = picked < 0;
  if (picked < 0) {
    $('chat-watch-note').textContent = `The reply: ${T - start} tokens. Pick one to see what it attended to.`;
    return markLensStep($, -1);
  }
  const p = start + picked,
    layer = Math.min(state.layer, r.attention.length - 1);
  let row;
  try {
    row = chatRow(r, T, p, { agg: state.chatAgg, layer, rollout: attn.attentionRollout });
  } catch (error) {
    map.hidden = true;
    $('chat-watch-note').textContent = `Cannot show this view: ${error.message}.`;
    return markLensStep($, p - 1);
  }
  map.toggleAttribute('signed', row.signed);
  map.data = {
    weights: row.weights,
    shape: row.shape,
    queryTokens: [tokens[p]],
    keyTokens: tokens.slice(0, p + 1),
  };
  map.setAttribute('head', state.chatAgg === 'layer' ? state.chatHead : '0');
  showSelection(map, { ...state, queries: [] });
  $('chat-watch-note').textContent =
    `Reply token ${picked} “${tokens[p]}” (position ${p}): its attention over the ${p} tokens before it and itself, ` +
    `${AGG[state.chatAgg](layer, state.chatHead)}. The logit lens column ${p - 1} (outlined below) is the step that wrote it.`;
  markLensStep($, p - 1);
}

const restoring = new WeakSet(); // the sources a link's conversation is being rendered for

/** A link's conversation on a model opened since: its template's prompt, then the reply from the link. */
async function restoreChat(source) {
  if (restoring.has(source) || !page.state.chatUser) return;
  restoring.add(source);
  const { chatReply } = page.state;
  try {
    const prompt = await source.chat(chatMessages(page.state));
    const length = (await source.tokenize(prompt)).ids.length;
    source.chatPrompt = { text: prompt, length };
    source.chatText = prompt + chatReply;
    setState({ text: source.chatText }, 'replace');
  } catch (error) {
    $('chat-note').textContent = `Could not apply the chat template: ${error.message}`;
  }
}

/** The view's own controls: the reply's buttons and keys, the aggregation, the map's head and key choices. */
export function attachChat() {
  const box = $('chat-reply');
  box.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-k]');
    if (b) setState({ chatToken: Number(b.dataset.k) }, 'push');
  });
  box.addEventListener('keydown', (e) => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    const b = e.target.closest('button[data-k]');
    if (!step || !b) return;
    e.preventDefault();
    const next = box.children[Number(b.dataset.k) + step];
    if (!next) return;
    next.focus();
    setState({ chatToken: Number(next.dataset.k) }, 'push');
  });
  $('chat-agg').addEventListener('change', (e) => setState({ chatAgg: e.target.value }, 'push'));
  $('chat-layer').addEventListener('change', (e) => setState({ layer: Number(e.target.value) }, 'push'));
  const map = $('chat-map');
  map.addEventListener('view-change', (e) => setState({ chatHead: String(e.detail.head) }, 'push'));
  map.addEventListener('selection-change', (e) => setState({ hideColumns: e.detail.hideColumns }, 'push'));
}

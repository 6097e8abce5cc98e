// A small Markdown renderer that never lets raw HTML through: the whole text is escaped
// first, and only then are headings, lists, quotes, bold/italic, inline code, code blocks
// and http(s) links turned into markup. A summary holding <script> or <img onerror=…>
// therefore shows as text.

export function escapeHtml(text) {
  return String(text ?? "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const HOLE = "\u0000"; // marks a stashed code span; stripped from the input beforehand

function inline(escaped) {
  const stash = [];
  let text = escaped.replace(/`([^`]+)`/g, (m, code) => {
    stash.push(`<code>${code}</code>`);
    return `${HOLE}${stash.length - 1}${HOLE}`;
  });
  // Links: only http(s) targets; anything else (javascript:, data:) stays as typed.
  text = text.replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, (m, label, href) => {
    stash.push(`<a href="${href}" target="_blank" rel="noopener noreferrer">${label}</a>`);
    return `${HOLE}${stash.length - 1}${HOLE}`;
  });
  text = text
    .replace(/\*\*(?=\S)(.+?)\*\*/g, "<strong>$1</strong>")
    .replace(/__(?=\S)(.+?)__/g, "<strong>$1</strong>")
    .replace(/(^|[^*\w])\*(?=\S)([^*]+?)\*(?!\*)/g, "$1<em>$2</em>")
    .replace(/(^|[^_\w])_(?=\S)([^_]+?)_(?!\w)/g, "$1<em>$2</em>");
  const holes = new RegExp(`${HOLE}(\\d+)${HOLE}`, "g");
  // twice: a link's label may hold a code span
  for (let pass = 0; pass < 2; pass += 1) text = text.replace(holes, (m, i) => stash[Number(i)]);
  return text;
}

const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const QUOTE = /^&gt;\s?(.*)$/;
const FENCE = /^\s*```/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;

function list(lines, i, pattern, tag) {
  const items = [];
  while (i < lines.length && pattern.test(lines[i])) {
    items.push(`<li>${inline(lines[i].match(pattern)[1])}</li>`);
    i += 1;
  }
  return [`<${tag}>${items.join("")}</${tag}>`, i];
}

function isBlockStart(line) {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    BULLET.test(line) ||
    NUMBERED.test(line) ||
    QUOTE.test(line) ||
    RULE.test(line)
  );
}

/** `text` (Markdown) as safe HTML. */
export function renderMarkdown(text) {
  const lines = escapeHtml(String(text ?? "").replaceAll(HOLE, "")).split(/\r?\n/);
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (FENCE.test(line)) {
      const code = [];
      i += 1;
      while (i < lines.length && !FENCE.test(lines[i])) code.push(lines[i++]);
      i += 1; // the closing fence (or the end)
      out.push(`<pre><code>${code.join("\n")}</code></pre>`);
    } else if (HEADING.test(line)) {
      const [, hashes, body] = line.match(HEADING);
      const level = Math.min(hashes.length + 2, 6); // inside a bubble: h3 and smaller
      out.push(`<h${level}>${inline(body)}</h${level}>`);
      i += 1;
    } else if (RULE.test(line)) {
      out.push("<hr>");
      i += 1;
    } else if (BULLET.test(line)) {
      let html;
      [html, i] = list(lines, i, BULLET, "ul");
      out.push(html);
    } else if (NUMBERED.test(line)) {
      let html;
      [html, i] = list(lines, i, NUMBERED, "ol");
      out.push(html);
    } else if (QUOTE.test(line)) {
      const quoted = [];
      while (i < lines.length && QUOTE.test(lines[i])) quoted.push(lines[i++].match(QUOTE)[1]);
      out.push(`<blockquote>${inline(quoted.join("<br>"))}</blockquote>`);
    } else if (!line.trim()) {
      i += 1;
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() && !isBlockStart(lines[i])) para.push(lines[i++]);
      out.push(`<p>${inline(para.join("<br>"))}</p>`);
    }
  }
  return out.join("");
}

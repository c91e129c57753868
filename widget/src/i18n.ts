// The panel's words in English and Russian. Every key exists in both; `{name}` placeholders are
// filled by `fill`. Counted words come in plural forms picked by Intl.PluralRules (Russian: one,
// few, many — 1 вложение, 2 вложения, 5 вложений, 21 вложение).

export const STRINGS = {
  en: {
    title: 'Feedback',
    close: 'Close',
    channel: 'Channel',
    message: 'Message',
    placeholder: 'What happened? What did you expect?',
    counter: '{n} of {max} characters',
    thread: 'In this report',
    items: ['{n} item', '{n} items'],
    remove: 'Remove',
    text: 'Text',
    screenshot: 'Screenshot',
    marks: ['{n} mark', '{n} marks'],
    voice: 'Voice note',
    selection: 'Selected text',
    quote: 'Quote',
    pinpoint: 'Pinpoint',
    file: 'File',
    tools: 'Add to the report',
    takeScreenshot: 'Screenshot',
    recordVoice: 'Voice',
    attachFiles: 'Files',
    quoteSelection: 'Quote',
    pinpointElement: 'Pinpoint',
    takeScreenshotLong: 'Take a screenshot of the page',
    recordVoiceLong: 'Record a voice note',
    attachFilesLong: 'Attach files',
    quoteSelectionLong: 'Quote text selected on the page',
    pinpointElementLong: 'Comment on an element of the page',
    pointAtIt: 'Point at it',
    pointAtItLong: 'Point at an element of the page',
    selected: 'Selected on the page',
    noSelection: 'Select text on the page first, then quote it here.',
    comment: 'Your comment (optional)',
    pinComment: 'Your comment on this element',
    add: 'Add',
    cancel: 'Cancel',
    pinHint: 'Click an element to comment on it. Esc cancels.',
    recording: 'Recording',
    stopAdd: 'Stop and add',
    holdToTalk: 'Hold {key} to talk',
    micUnavailable: 'The microphone is not available.',
    capturing: 'Taking a screenshot…',
    captureFailed: 'Could not take a screenshot.',
    markup: 'Mark up the screenshot',
    rect: 'Rectangle',
    arrow: 'Arrow',
    pen: 'Pen',
    blur: 'Blur',
    undo: 'Undo',
    addScreenshot: 'Add screenshot',
    uploading: 'Uploading {name}…',
    tooLarge: '{name} is larger than {size}.',
    uploadFailed: 'Could not upload {name}.',
    drop: 'Drop files to attach them',
    added: 'Added: {what}.',
    removed: 'Removed: {what}.',
    send: 'Send',
    sending: 'Sending…',
    sent: 'Sent. Thank you!',
    queued: 'Saved. It will be sent when the connection is back.',
    failed: 'Could not send the report ({code}).',
    empty: 'Write a message or add something to the report first.',
    history: 'History',
    historyEmpty: 'Nothing sent yet.',
    state_sent: 'sent',
    state_queued: 'queued',
    state_failed: 'failed',
    units: ['B', 'KB', 'MB', 'GB'],
  },
  ru: {
    title: 'Обратная связь',
    close: 'Закрыть',
    channel: 'Канал',
    message: 'Сообщение',
    placeholder: 'Что случилось? Чего вы ожидали?',
    counter: '{n} из {max} символов',
    thread: 'В этом отчёте',
    items: ['{n} вложение', '{n} вложения', '{n} вложений'],
    remove: 'Убрать',
    text: 'Текст',
    screenshot: 'Снимок экрана',
    marks: ['{n} пометка', '{n} пометки', '{n} пометок'],
    voice: 'Голосовая заметка',
    selection: 'Выделенный текст',
    quote: 'Цитата',
    pinpoint: 'Метка',
    file: 'Файл',
    tools: 'Добавить в отчёт',
    takeScreenshot: 'Снимок',
    recordVoice: 'Голос',
    attachFiles: 'Файлы',
    quoteSelection: 'Цитата',
    pinpointElement: 'Метка',
    takeScreenshotLong: 'Сделать снимок страницы',
    recordVoiceLong: 'Записать голосовую заметку',
    attachFilesLong: 'Прикрепить файлы',
    quoteSelectionLong: 'Процитировать выделенный на странице текст',
    pinpointElementLong: 'Прокомментировать элемент страницы',
    pointAtIt: 'Указать',
    pointAtItLong: 'Указать на элемент страницы',
    selected: 'Выделено на странице',
    noSelection: 'Сначала выделите текст на странице, затем процитируйте его здесь.',
    comment: 'Ваш комментарий (необязательно)',
    pinComment: 'Ваш комментарий к элементу',
    add: 'Добавить',
    cancel: 'Отмена',
    pinHint: 'Щёлкните по элементу, чтобы прокомментировать его. Отмена — клавиша Esc.',
    recording: 'Идёт запись',
    stopAdd: 'Остановить и добавить',
    holdToTalk: 'Удерживайте {key}, чтобы говорить',
    micUnavailable: 'Микрофон недоступен.',
    capturing: 'Делаем снимок экрана…',
    captureFailed: 'Не удалось сделать снимок экрана.',
    markup: 'Разметка снимка',
    rect: 'Прямоугольник',
    arrow: 'Стрелка',
    pen: 'Карандаш',
    blur: 'Размытие',
    undo: 'Отменить',
    addScreenshot: 'Добавить снимок',
    uploading: 'Загрузка: {name}…',
    tooLarge: 'Файл {name} больше {size}.',
    uploadFailed: 'Не удалось загрузить {name}.',
    drop: 'Отпустите файлы, чтобы прикрепить их',
    added: 'Добавлено: {what}.',
    removed: 'Убрано: {what}.',
    send: 'Отправить',
    sending: 'Отправка…',
    sent: 'Отправлено. Спасибо!',
    queued: 'Сохранено. Отчёт уйдёт, когда появится связь.',
    failed: 'Не удалось отправить отчёт ({code}).',
    empty: 'Сначала напишите сообщение или добавьте что-нибудь в отчёт.',
    history: 'История',
    historyEmpty: 'Пока ничего не отправлено.',
    state_sent: 'отправлено',
    state_queued: 'в очереди',
    state_failed: 'не доставлено',
    units: ['Б', 'КБ', 'МБ', 'ГБ'],
  },
};

export type Locale = keyof typeof STRINGS;
export type Strings = (typeof STRINGS)['en'];

/** Replaces `{key}` with values. */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
}

/** The plural form for `n`: English [one, other]; Russian [one, few, many] (fractions take "few"). */
export function plural(locale: Locale, n: number, forms: string[]): string {
  let i = 1;
  if (locale === 'ru') {
    const r10 = n % 10;
    const r100 = n % 100;
    i = !Number.isInteger(n) ? 1 : r10 === 1 && r100 !== 11 ? 0 : r10 >= 2 && r10 <= 4 && (r100 < 12 || r100 > 14) ? 1 : 2;
  } else if (n === 1) i = 0;
  return fill(forms[i], { n: n.toLocaleString(locale) });
}

/** A byte count as people read it: 999 B, 12 KB, 3.4 MB. */
export function formatBytes(locale: Locale, bytes: number): string {
  const units = STRINGS[locale].units;
  let i = 0;
  let v = bytes;
  while (v >= 1024 && i < units.length - 1) (v /= 1024), i++;
  return v.toLocaleString(locale, { maximumFractionDigits: v < 10 && i ? 1 : 0 }) + '\u00a0' + units[i];
}

/** m:ss */
export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
}

// What never leaves the page as pixels or text: password fields and anything marked
// `data-svc-mask` (screenshots paint them over; element texts leave them out).

export const MASK_SELECTOR = 'input[type=password],[data-svc-mask]';

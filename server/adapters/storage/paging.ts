export const DEFAULT_PAGE_SIZE = 100;

/** Page defaults: page 1, size 100. Only `size` sent means page 1. */
export function pageOf(p: { page?: number; size?: number }, defaultSize = DEFAULT_PAGE_SIZE) {
  const size = p.size ?? defaultSize;
  const page = p.page ?? 1;
  return { page, size, offset: (page - 1) * size };
}

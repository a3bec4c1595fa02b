import { Type as ClassType } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';

/** The page envelope of every list endpoint (spec 2.2). */
export interface Page<T> {
  items: T[];
  limit: number;
  next_cursor: string | null;
  previous_cursor: string | null;
}

const pageClasses = new Map<ClassType, ClassType>();

/** The OpenAPI schema of `Page<Item>`, one named class per item type. */
export function PageOf<T>(item: ClassType<T>): ClassType<Page<T>> {
  const existing = pageClasses.get(item);
  if (existing) return existing as ClassType<Page<T>>;
  class PageOfItem implements Page<T> {
    @ApiProperty({ type: [item] })
    items!: T[];
    @ApiProperty({ example: 20, description: 'The page size applied to this response.' })
    limit!: number;
    @ApiProperty({
      type: String,
      nullable: true,
      description: 'Cursor of the next (older) page; null on the last page.',
    })
    next_cursor!: string | null;
    @ApiProperty({
      type: String,
      nullable: true,
      description: 'Cursor of the previous (newer) page; null on the first page.',
    })
    previous_cursor!: string | null;
  }
  Object.defineProperty(PageOfItem, 'name', { value: `${item.name.replace(/Response$/, '')}Page` });
  pageClasses.set(item, PageOfItem);
  return PageOfItem;
}

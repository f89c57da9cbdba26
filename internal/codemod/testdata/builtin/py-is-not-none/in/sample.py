def first(items, default):
    if items != None:
        return items[0]
    elif default != None:
        return default
    # Left alone: not a plain name, or not the whole condition.
    if items != None and len(items) > 1:
        return items[1]
    return [x for x in (items or []) if x.value != None]

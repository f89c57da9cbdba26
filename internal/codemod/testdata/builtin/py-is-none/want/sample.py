def describe(value, query, model):
    if value is None:
        return "missing"
    elif query is None:
        return "no query"
    while value is None:
        value = 1
    # Left alone: == may be overloaded on purpose (query builders, arrays).
    rows = query.filter(model.deleted_at == None)
    if model.owner == None:
        return "orphan"
    same = value == None
    return rows, same

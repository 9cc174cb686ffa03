package ai.onyx.runtime;

/** The name and declared type of a model input or output. */
public final class NodeInfo {
  private final String name;
  private final TypeInfo type;

  NodeInfo(String name, TypeInfo type) {
    this.name = name;
    this.type = type;
  }

  public String getName() {
    return name;
  }

  public TypeInfo getType() {
    return type;
  }

  @Override
  public String toString() {
    return name + ": " + type;
  }
}

def create_entities(*, entities: list[dict[str, Any]]) -> dict[str, Any]:
    """Create multiple new entities in the knowledge graph

    Args:
        entities: Required.
            name (str): The name of the entity.
            entityType (str): The type of the entity.
            observations (list[str]): An array of observation contents associated with the entity.

    Returns:
        dict[str, Any]
            entities (list[dict[str, Any]])
                name (str): The name of the entity.
                entityType (str): The type of the entity.
                observations (list[str]): An array of observation contents associated with the entity.

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def create_relations(*, relations: list[dict[str, Any]]) -> dict[str, Any]:
    """Create multiple new relations between entities in the knowledge graph. Relations should be in active voice

    Args:
        relations: Required.
            from (str): The name of the entity where the relation starts.
            to (str): The name of the entity where the relation ends.
            relationType (str): The type of the relation.

    Returns:
        dict[str, Any]
            relations (list[dict[str, Any]])
                from (str): The name of the entity where the relation starts.
                to (str): The name of the entity where the relation ends.
                relationType (str): The type of the relation.

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def add_observations(*, observations: list[dict[str, Any]]) -> dict[str, Any]:
    """Add new observations to existing entities in the knowledge graph

    Args:
        observations: Required.
            entityName (str): The name of the entity to add the observations to.
            contents (list[str]): An array of observation contents to add.

    Returns:
        dict[str, Any]
            results (list[dict[str, Any]])
                entityName (str)
                addedObservations (list[str])

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def delete_entities(*, entityNames: list[str]) -> dict[str, Any]:
    """Delete multiple entities and their associated relations from the knowledge graph

    Args:
        entityNames: An array of entity names to delete. Required.

    Returns:
        dict[str, Any]
            success (bool)
            message (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def delete_observations(*, deletions: list[dict[str, Any]]) -> dict[str, Any]:
    """Delete specific observations from entities in the knowledge graph

    Args:
        deletions: Required.
            entityName (str): The name of the entity containing the observations.
            observations (list[str]): An array of observations to delete.

    Returns:
        dict[str, Any]
            success (bool)
            message (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def delete_relations(*, relations: list[dict[str, Any]]) -> dict[str, Any]:
    """Delete multiple relations from the knowledge graph

    Args:
        relations: An array of relations to delete. Required.
            from (str): The name of the entity where the relation starts.
            to (str): The name of the entity where the relation ends.
            relationType (str): The type of the relation.

    Returns:
        dict[str, Any]
            success (bool)
            message (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def read_graph() -> dict[str, Any]:
    """Read the entire knowledge graph

    Returns:
        dict[str, Any]
            entities (list[dict[str, Any]])
                name (str): The name of the entity.
                entityType (str): The type of the entity.
                observations (list[str]): An array of observation contents associated with the entity.
            relations (list[dict[str, Any]])
                from (str): The name of the entity where the relation starts.
                to (str): The name of the entity where the relation ends.
                relationType (str): The type of the relation.

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def search_nodes(*, query: str) -> dict[str, Any]:
    """Search for nodes in the knowledge graph based on a query

    Args:
        query: The search query to match against entity names, types, and observation content. Required.

    Returns:
        dict[str, Any]
            entities (list[dict[str, Any]])
                name (str): The name of the entity.
                entityType (str): The type of the entity.
                observations (list[str]): An array of observation contents associated with the entity.
            relations (list[dict[str, Any]])
                from (str): The name of the entity where the relation starts.
                to (str): The name of the entity where the relation ends.
                relationType (str): The type of the relation.

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def open_nodes(*, names: list[str]) -> dict[str, Any]:
    """Open specific nodes in the knowledge graph by their names

    Args:
        names: An array of entity names to retrieve. Required.

    Returns:
        dict[str, Any]
            entities (list[dict[str, Any]])
                name (str): The name of the entity.
                entityType (str): The type of the entity.
                observations (list[str]): An array of observation contents associated with the entity.
            relations (list[dict[str, Any]])
                from (str): The name of the entity where the relation starts.
                to (str): The name of the entity where the relation ends.
                relationType (str): The type of the relation.

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def read_file(*, path: str, tail: float | None = None, head: float | None = None) -> dict[str, Any]:
    """Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.

    Args:
        path: Required.
        tail: If provided, returns only the last N lines of the file. Optional; leave it out to use the tool's default.
        head: If provided, returns only the first N lines of the file. Optional; leave it out to use the tool's default.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def read_text_file(*, path: str, tail: float | None = None, head: float | None = None) -> dict[str, Any]:
    """Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Operates on the file as text regardless of extension. Only works within allowed directories.

    Args:
        path: Required.
        tail: If provided, returns only the last N lines of the file. Optional; leave it out to use the tool's default.
        head: If provided, returns only the first N lines of the file. Optional; leave it out to use the tool's default.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def read_media_file(*, path: str) -> dict[str, Any]:
    """Read a file and return it as a base64-encoded content block with its MIME type. Image and audio files are returned as image/audio content; any other file type is returned as an embedded resource. Only works within allowed directories.

    Args:
        path: Required.

    Returns:
        dict[str, Any]
            content (list[dict[str, Any]])
                One of:
                    variant 1
                        type (Literal["image", "audio"])
                        data (str)
                        mimeType (str)
                    variant 2
                        type (Literal["resource"])
                        resource (dict[str, Any])
                            uri (str)
                            mimeType (str, optional)
                            blob (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def read_multiple_files(*, paths: list[str]) -> dict[str, Any]:
    """Read the contents of multiple files simultaneously. This is more efficient than reading files one by one when you need to analyze or compare multiple files. Each file's content is returned with its path as a reference. Failed reads for individual files won't stop the entire operation. Only works within allowed directories.

    Args:
        paths: Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories. Constraints: at least 1 item. Required.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def write_file(*, path: str, content: str) -> dict[str, Any]:
    """Create a new file or completely overwrite an existing file with new content. Use with caution as it will overwrite existing files without warning. Handles text content with proper encoding. Only works within allowed directories.

    Args:
        path: Required.
        content: Required.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def edit_file(*, path: str, edits: list[dict[str, Any]], dryRun: bool = False) -> dict[str, Any]:
    """Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories.

    Args:
        path: Required.
        edits: Required.
            oldText (str): Text to search for - must match exactly.
            newText (str): Text to replace with.
        dryRun: Preview changes using git-style diff format. Defaults to false.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def create_directory(*, path: str) -> dict[str, Any]:
    """Create a new directory or ensure a directory exists. Can create multiple nested directories in one operation. If the directory already exists, this operation will succeed silently. Perfect for setting up directory structures for projects or ensuring required paths exist. Only works within allowed directories.

    Args:
        path: Required.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def list_directory(*, path: str) -> dict[str, Any]:
    """Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is essential for understanding directory structure and finding specific files within a directory. Only works within allowed directories.

    Args:
        path: Required.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def list_directory_with_sizes(*, path: str, sortBy: Literal["name", "size"] = "name") -> dict[str, Any]:
    """Get a detailed listing of all files and directories in a specified path, including sizes. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is useful for understanding directory structure and finding specific files within a directory. Only works within allowed directories.

    Args:
        path: Required.
        sortBy: Sort entries by name or size. Defaults to "name".

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def directory_tree(*, path: str, excludePatterns: list[str] | None = None) -> dict[str, Any]:
    """Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Files have no children array, while directories always have a children array (which may be empty). The output is formatted with 2-space indentation for readability. Only works within allowed directories.

    Args:
        path: Required.
        excludePatterns: Defaults to [].

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def move_file(*, source: str, destination: str) -> dict[str, Any]:
    """Move or rename files and directories. Can move files between directories and rename them in a single operation. If the destination exists, the operation will fail. Works across different directories and can be used for simple renaming within the same directory. Both source and destination must be within allowed directories.

    Args:
        source: Required.
        destination: Required.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def search_files(*, path: str, pattern: str, excludePatterns: list[str] | None = None) -> dict[str, Any]:
    """Recursively search for files and directories matching a pattern. The patterns should be glob-style patterns that match paths relative to the working directory. Use pattern like '*.ext' to match files in current directory, and '**/*.ext' to match files in all subdirectories. Returns full paths to all matching items. Great for finding files when you don't know their exact location. Only searches within allowed directories.

    Args:
        path: Required.
        pattern: Required.
        excludePatterns: Defaults to [].

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def get_file_info(*, path: str) -> dict[str, Any]:
    """Retrieve detailed metadata about a file or directory. Returns comprehensive information including size, creation time, last modified time, permissions, and type. This tool is perfect for understanding file characteristics without reading the actual content. Only works within allowed directories.

    Args:
        path: Required.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """

def list_allowed_directories() -> dict[str, Any]:
    """Returns the list of directories that this server is allowed to access. Subdirectories within these allowed directories are also accessible. Use this to understand which directories and their nested paths are available before trying to access files.

    Returns:
        dict[str, Any]
            content (str)

    Raises:
        ToolError: the tool failed (the message says why).
        ToolDenied: the call was not approved.
    """
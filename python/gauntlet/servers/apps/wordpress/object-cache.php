<?php
/*
 * The lab's object cache for WordPress (a drop-in, wp-content/object-cache.php): WordPress's
 * cache API kept in APCu, so that options, posts, terms and comments read by one request are
 * found by the next ones in the same PHP pool (or Apache) without a database query. Written for
 * Gauntlet (gauntlet.servers.apps.wordpress, `apcu`); wp-includes/cache-compat.php supplies the
 * *_multiple functions from these.
 */

class Gauntlet_APCu_Cache
{
    private array $local = [];
    private array $global_groups = [];
    private array $non_persistent_groups = [];
    private string $prefix;
    private int $blog_id;

    public function __construct()
    {
        // One pool may serve several sites: keys are prefixed with this site's directory.
        $this->prefix = 'gauntlet:' . md5(ABSPATH) . ':';
        $this->blog_id = function_exists('get_current_blog_id') ? get_current_blog_id() : 1;
    }

    private function key(string $key, string $group): string
    {
        $scope = isset($this->global_groups[$group]) ? 'global' : (string) $this->blog_id;
        return $this->prefix . $scope . ':' . $group . ':' . $key;
    }

    private function persistent(string $group): bool
    {
        return !isset($this->non_persistent_groups[$group]);
    }

    public function get($key, $group = 'default', $force = false, &$found = null)
    {
        $group = $group ?: 'default';
        $id = $this->key((string) $key, $group);
        if (!$force && array_key_exists($id, $this->local)) {
            $found = true;
            $value = $this->local[$id];
            return is_object($value) ? clone $value : $value;
        }
        if (!$this->persistent($group)) {
            $found = false;
            return false;
        }
        $value = apcu_fetch($id, $found);
        if (!$found) {
            return false;
        }
        $this->local[$id] = $value;
        return is_object($value) ? clone $value : $value;
    }

    public function set($key, $data, $group = 'default', $expire = 0)
    {
        $group = $group ?: 'default';
        $id = $this->key((string) $key, $group);
        $this->local[$id] = is_object($data) ? clone $data : $data;
        return $this->persistent($group) ? apcu_store($id, $data, (int) $expire) : true;
    }

    public function add($key, $data, $group = 'default', $expire = 0)
    {
        if (wp_suspend_cache_addition()) {
            return false;
        }
        $this->get($key, $group, false, $found);
        return $found ? false : $this->set($key, $data, $group, $expire);
    }

    public function replace($key, $data, $group = 'default', $expire = 0)
    {
        $this->get($key, $group, false, $found);
        return $found ? $this->set($key, $data, $group, $expire) : false;
    }

    public function delete($key, $group = 'default')
    {
        $group = $group ?: 'default';
        $id = $this->key((string) $key, $group);
        $existed = array_key_exists($id, $this->local);
        unset($this->local[$id]);
        return $this->persistent($group) ? apcu_delete($id) || $existed : $existed;
    }

    public function incr($key, $offset = 1, $group = 'default')
    {
        $value = $this->get($key, $group, false, $found);
        if (!$found) {
            return false;
        }
        $value = max(0, (is_numeric($value) ? (int) $value : 0) + (int) $offset);
        $this->set($key, $value, $group);
        return $value;
    }

    public function flush()
    {
        $this->local = [];
        return apcu_clear_cache();
    }

    public function flush_runtime()
    {
        $this->local = [];
        return true;
    }

    public function add_global_groups($groups)
    {
        foreach ((array) $groups as $group) {
            $this->global_groups[$group] = true;
        }
    }

    public function add_non_persistent_groups($groups)
    {
        foreach ((array) $groups as $group) {
            $this->non_persistent_groups[$group] = true;
        }
    }

    public function switch_to_blog($blog_id)
    {
        $this->blog_id = (int) $blog_id;
    }
}

function wp_cache_init()
{
    $GLOBALS['wp_object_cache'] = new Gauntlet_APCu_Cache();
}

function wp_cache_get($key, $group = '', $force = false, &$found = null)
{
    return $GLOBALS['wp_object_cache']->get($key, $group, $force, $found);
}

function wp_cache_set($key, $data, $group = '', $expire = 0)
{
    return $GLOBALS['wp_object_cache']->set($key, $data, $group, $expire);
}

function wp_cache_add($key, $data, $group = '', $expire = 0)
{
    return $GLOBALS['wp_object_cache']->add($key, $data, $group, $expire);
}

function wp_cache_replace($key, $data, $group = '', $expire = 0)
{
    return $GLOBALS['wp_object_cache']->replace($key, $data, $group, $expire);
}

function wp_cache_delete($key, $group = '')
{
    return $GLOBALS['wp_object_cache']->delete($key, $group);
}

function wp_cache_incr($key, $offset = 1, $group = '')
{
    return $GLOBALS['wp_object_cache']->incr($key, $offset, $group);
}

function wp_cache_decr($key, $offset = 1, $group = '')
{
    return $GLOBALS['wp_object_cache']->incr($key, -$offset, $group);
}

function wp_cache_flush()
{
    return $GLOBALS['wp_object_cache']->flush();
}

function wp_cache_flush_runtime()
{
    return $GLOBALS['wp_object_cache']->flush_runtime();
}

function wp_cache_close()
{
    return true;
}

function wp_cache_add_global_groups($groups)
{
    $GLOBALS['wp_object_cache']->add_global_groups($groups);
}

function wp_cache_add_non_persistent_groups($groups)
{
    $GLOBALS['wp_object_cache']->add_non_persistent_groups($groups);
}

function wp_cache_switch_to_blog($blog_id)
{
    $GLOBALS['wp_object_cache']->switch_to_blog($blog_id);
}

function wp_cache_reset()
{
    $GLOBALS['wp_object_cache']->flush_runtime();
}
